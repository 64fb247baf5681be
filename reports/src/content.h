/* The pieces of a report's content shared by content.c (dumps, checks, totals, queue, sizes,
 * layouts, precision), its sections in files of their own and content_cells.c (the cells and
 * lines they all write). content.c calls the sections; a section never calls content.c. */
#ifndef REPORTS_CONTENT_H
#define REPORTS_CONTENT_H

#include <stdint.h>

#include "document.h"
#include "internal.h"

#define CELL 64

/* content_cells.c: cells and lines every section writes */
const char *report_count_cell(char *buf, uint64_t n);
/* A figure into buf (CELL bytes): 1234.4 -> "1,234", bytes as report_fmt_bytes; "~" before an
 * estimate. */
const char *report_fig_count(char *buf, double v, bool estimated);
const char *report_fig_bytes(char *buf, double v, bool estimated);
/* A site's stack as lines of the current BLOCK_LINES, innermost first. */
void report_stack_lines(struct document *d, const struct report *r, const struct report_stack *s);
/* where.c: the frame worth naming for a site: the first outside the runtime and the wrappers,
 * in C++ the program's own with the standard container it called; names shortened unless
 * long_names. */
void report_site_where(const struct report *r, const struct report_site *s, bool long_names,
                       char *out, size_t size);

/* content_summary.c: what to look at first (the HTML page's banner): the checks of a queue
 * audit, the largest leak, the costliest site, the most temporary allocations. */
void report_section_summary(struct document *d, const struct report *r);
/* content_cells.c: the sentence on live blocks without a site and why (with the command that
 * gives each its site where the stacks mode is why); false when every live block has its site.
 * report_held_when: when the blocks called live were, "at the snapshot", "at the detach", else
 * "at exit". */
bool report_unsited_sentence(const struct report *r, char *out, size_t size);
const char *report_held_when(const struct report *r);
/* "#3, big_leak (prog.c:4)": a site as the summary and the live section name it. */
void report_site_name(const struct report *r, const struct report_site *s, bool long_names,
                      char *out, size_t size);

/* content_sites.c; report_by_design_sentence: the blocks held by design and their sites (live
 * blocks of start-up that are no leak), each with its reason when detailed; false when there are
 * none. */
bool report_by_design_sentence(const struct report *r, bool detailed, char *out, size_t size);
void report_section_coverage(struct document *d, const struct report *r);
void report_section_sites(struct document *d, const struct report *r, unsigned top, bool *shown);
void report_section_live(struct document *d, const struct report *r, unsigned top, bool *shown);
void report_section_temporary(struct document *d, const struct report *r, unsigned top);

/* content_timeline.c */
void report_section_timeline(struct document *d, const struct report *r);
/* timeline_gaps.c: a time on the clock of dump_time_ns as seconds from p's start. */
double report_seconds_since_start(const struct report_process *p, uint64_t time_ns);

#endif
