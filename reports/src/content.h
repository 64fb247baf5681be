/* The pieces of a report's content shared by content.c (dumps, checks, totals, queue, sizes,
 * layouts, precision) and content_sites.c (sites, live bytes, temporary allocations). */
#ifndef REPORTS_CONTENT_H
#define REPORTS_CONTENT_H

#include <stdint.h>

#include "document.h"
#include "internal.h"

#define CELL 64

const char *count_cell(char *buf, uint64_t n);
/* A site's stack as lines of the current BLOCK_LINES, innermost first. */
void stack_lines(struct document *d, const struct report *r, const struct report_stack *s);
/* The frame worth naming for a site: the first outside the runtime and the wrappers. */
void site_where(const struct report *r, const struct report_site *s, char *out, size_t size);

/* content_sites.c */
void section_coverage(struct document *d, const struct report *r);
void section_sites(struct document *d, const struct report *r, unsigned top, bool *shown);
void section_live(struct document *d, const struct report *r, unsigned top, bool *shown);
void section_temporary(struct document *d, const struct report *r, unsigned top);

/* content_timeline.c */
void section_timeline(struct document *d, const struct report *r);
/* A time on the clock of dump_time_ns as seconds from p's start. */
double seconds_since_start(const struct report_process *p, uint64_t time_ns);

#endif
