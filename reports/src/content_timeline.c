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
                  "pid %" PRIu64 " (%s): live bytes highest at %s at %.2f s%s (%zu point%s, %s "
                  "ms apart, %zu dump%s).",
                  p->pid, p->argv[0] ? p->argv : p->exe,
                  fmt_bytes(a, sizeof a, p->timeline[live].live_bytes),
                  seconds_since_start(p, p->timeline[live].time_ns), rss_text, p->timeline_count,
                  p->timeline_count == 1 ? "" : "s",
                  fmt_count((char[CELL]){0}, CELL, p->timeline_period_ns / 1000000),
                  p->dump_time_count, p->dump_time_count == 1 ? "" : "s");
}

/* The processes shown: at most TIMELINES_SHOWN, those whose live bytes rose highest (a build's
 * hundreds of short compilers would bury the one that matters), in the report's order. */
#define TIMELINES_SHOWN 10

static uint64_t live_peak(const struct report_process *p)
{
    return p->timeline_count ? p->timeline[timeline_peak(p, false)].live_bytes : 0;
}

/* Whether process i is among the TIMELINES_SHOWN highest (ties: the earlier ones). */
static bool shown(const struct report *r, size_t i)
{
    if (r->process_count <= TIMELINES_SHOWN)
        return true;
    uint64_t mine = live_peak(&r->processes[i]);
    size_t above = 0;
    for (size_t j = 0; j < r->process_count && above < TIMELINES_SHOWN; j++) {
        uint64_t theirs = live_peak(&r->processes[j]);
        above += theirs > mine || (theirs == mine && j < i);
    }
    return above < TIMELINES_SHOWN;
}

void section_timeline(struct document *d, const struct report *r)
{
    if (!report_has_timeline(r))
        return;
    doc_heading(d, 2, "Memory over time");
    doc_paragraph(d, "Points taken by the interposer at a fixed period (seconds from each "
                     "process's start): a peak shorter than the period falls between two points, "
                     "and live bytes are as exact as the peak in Totals (see Precision).");
    if (r->process_count > TIMELINES_SHOWN)
        doc_paragraph(d,
                      "The %d processes whose live bytes rose highest, of %zu (the JSON report "
                      "holds every point of each):",
                      TIMELINES_SHOWN, r->process_count);
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        if (!shown(r, i))
            continue;
        if (p->timeline_count == 0) {
            doc_paragraph(
                d, "pid %" PRIu64 ": no timeline (an older dump, or QAUDIT_TIMELINE=off).", p->pid);
            continue;
        }
        process_line(d, p);
        doc_html_view(d, VIEW_TIMELINE, i);
    }
}
