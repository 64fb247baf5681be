/* Layouts for people (pahole-like text) and for machines (JSON "qaudit-layout/1"). */
#ifndef PROBE_RENDER_H
#define PROBE_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "probe/layout.h"

/* glibc's size class for a request of size bytes: the chunk it reserves,
 * max(32, (size + 8 + 15) & ~15). */
uint64_t layout_glibc_chunk(uint64_t size);

void layout_print_text(FILE *out, const struct layout_type *t, unsigned cacheline);
json_t *layout_type_json(const struct layout_type *t);

#endif
