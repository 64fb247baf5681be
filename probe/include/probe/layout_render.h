/* Layouts for people (pahole-like text) and for machines (JSON "qaudit-layout/1"). */
#ifndef PROBE_LAYOUT_RENDER_H
#define PROBE_LAYOUT_RENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "probe/layout.h"

void layout_print_text(FILE *out, const struct layout_type *t, unsigned cacheline);
/* A Markdown section for a pull request: offset, size, member, type; holes as rows. */
void layout_print_markdown(FILE *out, const struct layout_type *t);
json_t *layout_type_json(const struct layout_type *t);
/* {"glibc": class, "mimalloc": ..., ...} of a block of size bytes (null where a model has none). */
json_t *layout_classes_json(uint64_t size);
/* "glibc 48, mimalloc 48, jemalloc 48, tcmalloc 48" into out (space bytes): the classes of a
 * block of size bytes, as text, Markdown and reports print them; out. */
const char *layout_classes_text(uint64_t size, char *out, size_t space);

/* A qaudit-layout/1 document written a type at a time (layout_json_stream.c): each type's JSON
 * is built, written and freed in turn, so a full dump never holds the whole document. */
struct layout_json_writer {
    FILE *out;
    size_t types;
};
void layout_json_begin(struct layout_json_writer *w, FILE *out, const char *binary,
                       unsigned cacheline);
/* False when out of memory (nothing of the type is written then). */
bool layout_json_type(struct layout_json_writer *w, const struct layout_type *t);
void layout_json_end(struct layout_json_writer *w);

#endif
