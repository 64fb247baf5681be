/* Inline SVG for the HTML page: bar charts, the struct layout diagram, and axis helpers. */
#ifndef REPORTS_SVG_H
#define REPORTS_SVG_H

#include <stdio.h>

#include "document.h"

/* Horizontal bars with a legend, the category axis named (chart.axis) and a value scale; past 16
 * bars the 15 highest and the rest summed into one. */
void report_svg_bar_chart(FILE *out, const struct chart *c);

/* A round step (1, 2 or 5 times a power of ten) for about `ticks` ticks from 0 to max, and the
 * axis' end: the first multiple of step at or above max. */
double report_svg_nice_step(double max, int ticks);
double report_svg_axis_end(double max, double step);
/* The binary unit for bytes up to max ("bytes", "KiB", "MiB"...) and its size. */
const char *report_svg_byte_unit(double max, double *per_unit);

/* One row per cache line, one 12-pixel column per byte: members as boxes, holes hatched red,
 * tail padding grey, members that straddle a line outlined red. */
void report_svg_layout(FILE *out, const struct layout_type *t, unsigned cacheline);

#endif
