/* The render room of the reports library, its top: each format written by one renderer, chosen
 * in render_report.c (report_render, report_diff_render), the only caller of the others. Text
 * (render_text.c), Markdown (render_markdown.c) and HTML (render_html.c, the views it draws from
 * the report itself: html_flame.c, html_sites.c, html_timeline.c, html_meta.c, html_assets.c, and
 * svg.c) draw a document (document/); JSON (render_json.c, its timeline: render_json_timeline.c),
 * pprof (render_pprof.c) and folded stacks (render_folded.c) write from the model, with content/'s
 * figures; the compare table (compare.c) writes its own document as text or Markdown. Uses
 * content/ and every room under it. Files: the .c files of render/. */
#ifndef REPORTS_ROOM_RENDER_H
#define REPORTS_ROOM_RENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "../content/reports_content.h"
#include "reports/render.h"
#include "reports/report.h"

/* ---- the renderers and the choice among them ------------------------------------------------ */

/* qaudit-report/1 (render_json.c). */
void report_render_json(FILE *out, const struct report *r, const struct report_options *options);

/* The renderers (render_text.c, render_markdown.c, render_html.c) and the choice among them
 * (render_report.c, the top of the library). */
void report_render_text(FILE *out, const struct document *d);
void report_render_markdown(FILE *out, const struct document *d);
void report_render_html(FILE *out, const struct document *d);
/* One of the three above by format (REPORT_TEXT, REPORT_MARKDOWN, else HTML); frees d. */
void report_render_document(FILE *out, struct document *d, enum report_format format);

/* ---- render_json_timeline.c: the JSON report's `timeline`: one object per process with a series
 * (docs/report-format.md). */
json_t *report_timeline_json(const struct report *r);

/* ---- the profile exports: pprof's profile.proto (render_pprof.c) and folded stacks
 * (render_folded.c); report_render dispatches to them. */

/* A gzipped pprof heap profile of r's sites (alloc_space its default sample type when allocs,
 * else inuse_space); warn (may be NULL) gets a line per module whose
 * build id is neither in the dump nor readable from its file. Write errors show in ferror(out). */
void report_render_pprof(FILE *out, const struct report *r, FILE *warn, bool allocs);

void report_render_folded(FILE *out, const struct report *r, enum report_weight weight);

/* ---- the parts of the HTML page render_html.c puts together: the views drawn from the report
 * itself (flame graph, sortable site table, memory over time), the run's metadata, and the page's
 * inline style and script. */

/* html_assets.c: the page's only style and script, inline (no network, no other file). The script
 * marks <body> data-ready="1" when it ran through, data-error with a script error's message. */
extern const char report_html_style[];
extern const char report_html_script[];

/* html_flame.c: the flame graph's controls, canvas and data (compact JSON in a
 * <script type="application/json" id="flame-data">), frames as the folded views walk them
 * (flame_stacks.h). At most HTML_FLAME_NODES nodes: the smallest in every weight are left out. C++
 * names shortened (cxx_short_names.c) unless long_names. */
#define HTML_FLAME_NODES 20000
void report_html_flame(FILE *out, const struct report *r, bool long_names);

/* html_sites.c: one sortable table of the sites in the top `top` by allocations, bytes, peak live
 * or live bytes; sorted by any column, that column's top come first. */
void report_html_site_table(FILE *out, const struct report *r, unsigned top, bool long_names);

/* html_timeline.c: memory over time of one process, an SVG with axes, units, legend, its dumps
 * and its peak marked. */
void report_html_timeline(FILE *out, const struct report_process *p);

/* html_meta.c: program, start, duration, qaudit version, stacks mode of the run. */
void report_html_metadata(FILE *out, const struct report *r);

/* ---- svg.c: inline SVG for the HTML page: bar charts, the struct layout diagram, and axis
 * helpers. */

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
