/* The parts of the HTML page render_html.c puts together: the views drawn from the report itself
 * (flame graph, sortable site table, memory over time), the run's metadata, and the page's inline
 * style and script. */
#ifndef REPORTS_HTML_H
#define REPORTS_HTML_H

#include <stdio.h>

#include "reports/report.h"

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

#endif
