/* The cells and lines every section of a report's content writes: counts and figures (an
 * estimate marked with '~') and a site's stack. Shared by content.c, content_sites.c,
 * content_summary.c and content_diff.c, so that none of them calls another for these. */
#include <stdio.h>

#include "content.h"

const char *report_count_cell(char *buf, uint64_t n)
{
    return report_fmt_count(buf, CELL, n);
}

const char *report_fig_count(char *buf, double v, bool estimated)
{
    char n[CELL - 2];
    report_fmt_count(n, sizeof n, (unsigned long long)(v + 0.5));
    snprintf(buf, CELL, "%s%s", estimated ? "~" : "", n);
    return buf;
}

const char *report_fig_bytes(char *buf, double v, bool estimated)
{
    char n[CELL - 2];
    report_fmt_bytes(n, sizeof n, (unsigned long long)(v + 0.5));
    snprintf(buf, CELL, "%s%s", estimated ? "~" : "", n);
    return buf;
}

void report_stack_lines(struct document *d, const struct report *r, const struct report_stack *s)
{
    char where[1024];
    for (size_t i = 0; i < s->frame_count; i++) {
        report_frame_describe_level(r, &s->frames[i], 0, !d->long_names, where, sizeof where);
        report_doc_line(d, "    #%zu %s", i, where);
    }
    if (s->frame_count == 0)
        report_doc_line(d, "    (no stack: stacks were off for this allocation)");
}
