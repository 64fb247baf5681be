/* The cells and lines every section of a report's content writes: counts and figures (an
 * estimate marked with '~') and a site's stack. Shared by content.c, content_sites.c,
 * content_summary.c and content_diff.c, so that none of them calls another for these. */
#include <stdio.h>
#include <string.h>

#include "reports_content.h"

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

/* Why live blocks have no site, by the stacks mode. */
static const char *unsited_reason(const struct report *r, const struct unsited *u, bool *command)
{
    char mode[128];
    report_stacks_mode(r, mode, sizeof mode);
    *command = !u->every_site;
    if (u->every_site)
        return "their allocations have no stack (made before the interposer started, or beyond "
               "its tables: see Precision)";
    if (strncmp(mode, "sampled", 7) == 0)
        return "stacks were sampled, and a site holding few small blocks can have no sample";
    if (strcmp(mode, "queue") == 0)
        return "with stacks 'queue' only allocations inside queue operations get a stack";
    if (strcmp(mode, "off") == 0)
        return "stacks were off";
    return "some dumps did not take a stack for every allocation";
}

/* When the blocks called live were: "at the snapshot", "at the detach", else "at exit" (a
 * process that ended holds its leaks). */
const char *report_held_when(const struct report *r)
{
    enum live_scope scope = report_live_scope(r);
    return scope == LIVE_NOW || scope == LIVE_AT_DETACH ? report_live_scope_phrase(scope)
                                                        : "at exit";
}

bool report_unsited_sentence(const struct report *r, char *out, size_t size)
{
    struct unsited u;
    report_live_without_site(r, &u);
    if (u.blocks < 1)
        return false;
    bool command;
    const char *why = unsited_reason(r, &u, &command);
    char blocks[CELL], all[CELL], bytes[CELL], run[4200] = "";
    if (command) {
        char line[4096];
        report_attribute_command(r, line, sizeof line);
        snprintf(run, sizeof run, "; `%s` gives every block its site", line);
    }
    snprintf(out, size, "No site for %s of the %s blocks live %s (at most %s): %s%s.",
             report_fig_count(blocks, u.blocks, u.estimated),
             report_count_cell(all, r->totals.live_blocks), report_held_when(r),
             report_fig_bytes(bytes, u.bytes, u.estimated), why, run);
    return true;
}
