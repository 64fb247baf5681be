/* The cells and lines every section of a report's content writes: counts and figures (an
 * estimate marked with '~'), a site's stack and the frame that names it. Shared by content.c,
 * content_sites.c, content_summary.c and content_diff.c, so that none of them calls another for
 * these. */
#include <stdio.h>

#include "content.h"

const char *count_cell(char *buf, uint64_t n)
{
    return fmt_count(buf, CELL, n);
}

const char *fig_count(char *buf, double v, bool estimated)
{
    char n[CELL - 2];
    fmt_count(n, sizeof n, (unsigned long long)(v + 0.5));
    snprintf(buf, CELL, "%s%s", estimated ? "~" : "", n);
    return buf;
}

const char *fig_bytes(char *buf, double v, bool estimated)
{
    char n[CELL - 2];
    fmt_bytes(n, sizeof n, (unsigned long long)(v + 0.5));
    snprintf(buf, CELL, "%s%s", estimated ? "~" : "", n);
    return buf;
}

void stack_lines(struct document *d, const struct report *r, const struct report_stack *s)
{
    char where[1024];
    for (size_t i = 0; i < s->frame_count; i++) {
        report_frame_describe(r, &s->frames[i], where, sizeof where);
        doc_line(d, "    #%zu %s", i, where);
    }
    if (s->frame_count == 0)
        doc_line(d, "    (no stack: stacks were off for this allocation)");
}

void site_where(const struct report *r, const struct report_site *s, char *out, size_t size)
{
    const struct report_stack *stack = &s->stack;
    for (size_t i = 0; i < stack->frame_count; i++) {
        const struct report_frame *f = &stack->frames[i];
        if (runtime_frame(r, f))
            continue;
        size_t first = 0; /* a wrapper inlined into its caller: name the caller */
        while (first + 1 < f->location_count && report_is_wrapper(r, f->locations[first].function))
            first++;
        if (first + 1 == f->location_count && report_is_wrapper(r, f->locations[first].function) &&
            i + 1 < stack->frame_count)
            continue; /* a wrapper frame the fold kept (shallow stacks): look further */
        report_frame_describe_from(r, f, first, out, size);
        return;
    }
    if (stack->frame_count == 0)
        snprintf(out, size, "(no stack)");
    else
        report_frame_describe(r, &stack->frames[0], out, size);
}
