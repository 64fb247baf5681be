/* The run at the top of the HTML page: which program, when it started (UTC), how long it ran to
 * its last dump, which qaudit wrote the report, and how stacks were taken. */
#include <inttypes.h>
#include <time.h>

#include "reports_render.h"
#include "common/xml_escape.h"

#ifndef QAUDIT_VERSION
#define QAUDIT_VERSION "unknown"
#endif

static void item(FILE *out, const char *term, const char *value)
{
    fprintf(out, "<dt>%s</dt><dd>", term);
    xml_escape(out, value);
    fputs("</dd>", out);
}

static void program(FILE *out, const struct report *r)
{
    const struct report_process *p = &r->processes[0];
    char text[4096];
    if (r->process_count == 1)
        snprintf(text, sizeof text, "%s", p->argv[0] ? p->argv : p->exe);
    else
        snprintf(text, sizeof text, "%s, and %zu other process%s", p->argv[0] ? p->argv : p->exe,
                 r->process_count - 1, r->process_count == 2 ? "" : "es");
    item(out, "program", text);
}

/* Start: the earliest process start; duration: from it to the latest dump. */
static void times(FILE *out, const struct report *r)
{
    uint64_t start = UINT64_MAX, end = 0;
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        start = p->start_time_ns < start ? p->start_time_ns : start;
        end = p->dump_time_ns > end ? p->dump_time_ns : end;
    }
    time_t seconds = (time_t)(start / 1000000000u);
    struct tm tm;
    char text[64];
    if (start != 0 && gmtime_r(&seconds, &tm) != NULL &&
        strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm) > 0)
        item(out, "started", text);
    if (end >= start) {
        snprintf(text, sizeof text, "%.2f s (to the last dump)", (double)(end - start) / 1e9);
        item(out, "duration", text);
    }
}

void report_html_metadata(FILE *out, const struct report *r)
{
    if (r == NULL || r->process_count == 0)
        return;
    char text[128];
    fputs("<dl class=\"meta\">", out);
    program(out, r);
    times(out, r);
    report_stacks_mode(r, text, sizeof text);
    item(out, "stacks", text);
    snprintf(text, sizeof text, "%zu process%s, %zu dump%s read", r->process_count,
             r->process_count == 1 ? "" : "es", r->process_count + r->superseded + r->duplicates,
             r->process_count + r->superseded + r->duplicates == 1 ? "" : "s");
    item(out, "dumps", text);
    item(out, "qaudit", QAUDIT_VERSION);
    fputs("</dl>\n", out);
}
