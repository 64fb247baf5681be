/* Inline SVG for the HTML page: bar charts and the struct layout diagram. */
#ifndef REPORTS_SVG_H
#define REPORTS_SVG_H

#include <stdio.h>

#include "document.h"

void svg_bar_chart(FILE *out, const struct chart *c);

/* One row per cache line, one 12-pixel column per byte: members as boxes, holes hatched red,
 * tail padding grey, members that straddle a line outlined red. */
void svg_layout(FILE *out, const struct layout_type *t, unsigned cacheline);

#endif
