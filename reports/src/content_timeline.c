/* "Memory over time": for each process with a timeline, one line with the highest live bytes and
 * resident set among its points and when (seconds from the process's start); HTML draws the series
 * under it. Dumps without a timeline (older ones, QAUDIT_TIMELINE=off) add no section. */
#include <inttypes.h>

#include "content.h"
#include "timeline.h"

double seconds_since_start(const struct report_process *p, uint64_t time_ns)
{
    return ((double)time_ns - (double)p->start_time_ns) / 1e9;
}

static void process_line(struct document *d, const struct report_process *p)
{
    size_t live = timeline_peak(p, false), rss = timeline_peak(p, true);
    char a[CELL], b[CELL], rss_text[2 * CELL] = "";
    if (p->timeline[rss].rss_bytes > 0)
        snprintf(rss_text, sizeof rss_text, "; resident set highest at %s at %.2f s",
                 fmt_bytes(b, sizeof b, p->timeline[rss].rss_bytes),
                 seconds_since_start(p, p->timeline[rss].time_ns));
    doc_paragraph(d,
                  "pid %" PRIu64 " (%s): live bytes highest at %s at %.2f s%s (%zu points, %s "
                  "ms apart, %zu dump%s).",
                  p->pid, p->argv[0] ? p->argv : p->exe,
                  fmt_bytes(a, sizeof a, p->timeline[live].live_bytes),
                  seconds_since_start(p, p->timeline[live].time_ns), rss_text, p->timeline_count,
                  fmt_count((char[CELL]){0}, CELL, p->timeline_period_ns / 1000000),
                  p->dump_time_count, p->dump_time_count == 1 ? "" : "s");
}

void section_timeline(struct document *d, const struct report *r)
{
    if (!report_has_timeline(r))
        return;
    doc_heading(d, 2, "Memory over time");
    doc_paragraph(d, "Points taken by the interposer at a fixed period (seconds from each "
                     "process's start): a peak shorter than the period falls between two points, "
                     "and live bytes are as exact as the peak in Totals (see Precision).");
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        if (p->timeline_count == 0) {
            doc_paragraph(
                d, "pid %" PRIu64 ": no timeline (an older dump, or QAUDIT_TIMELINE=off).", p->pid);
            continue;
        }
        process_line(d, p);
        doc_html_view(d, VIEW_TIMELINE, i);
    }
}
