/* Layouts for people (pahole-like text) and for machines (JSON "qaudit-layout/1"). */
#ifndef PROBE_RENDER_H
#define PROBE_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "probe/layout.h"

void layout_print_text(FILE *out, const struct layout_type *t, unsigned cacheline);
/* A Markdown section for a pull request: offset, size, member, type; holes as rows. */
void layout_print_markdown(FILE *out, const struct layout_type *t);
json_t *layout_type_json(const struct layout_type *t);
/* Writes s with &, <, > and " escaped, for XML and HTML text and attributes (JUnit, reports). */
void xml_escape(FILE *out, const char *s);

#endif
