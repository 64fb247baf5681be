/* "Memory over time": for each process with a timeline, one line with the highest live bytes and
 * resident set among its points and when (seconds from the process's start), what its points are
 * and, where fewer than its life at the period gives, why (timeline_gaps.c); HTML draws the series
 * under it when it shows something. Dumps without a timeline (older ones, QAUDIT_TIMELINE=off)
 * add no section. */
#include <inttypes.h>

#include "reports_content.h"

/* "12 points over 1.20 s, one every 100 ms": what the points are, true of this process. */
static void points_phrase(const struct report_process *p, size_t gaps, char *out, size_t size)
{
    char period[CELL];
    report_fmt_count(period, sizeof period, p->timeline_period_ns / 1000000);
    uint64_t life = report_timeline_life_ns(p);
    int n = snprintf(out, size, "%zu point%s over %.2f s", p->timeline_count,
                     p->timeline_count == 1 ? "" : "s", (double)life / 1e9);
    if (n < 0 || (size_t)n >= size)
        return;
    if (life < 2 * p->timeline_period_ns)
        snprintf(out + n, size - (size_t)n, ", less than two periods of %s ms", period);
    else if (gaps == 0)
        snprintf(out + n, size - (size_t)n, ", one every %s ms", period);
    else
        snprintf(out + n, size - (size_t)n, " at a %s ms period, fewer where said below", period);
}

/* Why the points are fewer than the period gives: the first stretches without one. */
#define GAPS_SAID 2

static void gaps_paragraph(struct document *d, const struct report_process *p)
{
    struct timeline_gap gaps[GAPS_SAID];
    size_t n = report_timeline_gaps(p, gaps, GAPS_SAID);
    for (size_t i = 0; i < n && i < GAPS_SAID; i++) {
        char sentence[600];
        report_timeline_gap_sentence(p, &gaps[i], sentence, sizeof sentence);
        sentence[0] = (char)(sentence[0] - 'a' + 'A');
        report_doc_paragraph(d, "pid %" PRIu64 ": %s.", p->pid, sentence);
    }
    if (n > GAPS_SAID)
        report_doc_paragraph(d,
                             "pid %" PRIu64 ": %zu more stretches without a point (the JSON report "
                             "lists each).",
                             p->pid, n - GAPS_SAID);
}

static void process_line(struct document *d, const struct report_process *p)
{
    size_t live = report_timeline_peak(p, false), rss = report_timeline_peak(p, true);
    char a[CELL], b[CELL], rss_text[2 * CELL] = "", points[160];
    if (p->timeline[rss].rss_bytes > 0)
        snprintf(rss_text, sizeof rss_text, "; resident set highest at %s at %.2f s",
                 report_fmt_bytes(b, sizeof b, p->timeline[rss].rss_bytes),
                 report_seconds_since_start(p, p->timeline[rss].time_ns));
    size_t gaps = report_timeline_gaps(p, NULL, 0);
    points_phrase(p, gaps, points, sizeof points);
    report_doc_paragraph(
        d, "pid %" PRIu64 " (%s): live bytes highest at %s at %.2f s%s (%s; %zu dump%s).", p->pid,
        p->argv[0] ? p->argv : p->exe, report_fmt_bytes(a, sizeof a, p->timeline[live].live_bytes),
        report_seconds_since_start(p, p->timeline[live].time_ns), rss_text, points,
        p->dump_time_count, p->dump_time_count == 1 ? "" : "s");
    gaps_paragraph(d, p);
}

/* The processes shown: at most TIMELINES_SHOWN, those whose live bytes rose highest (a build's
 * hundreds of short compilers would bury the one that matters), in the report's order. */
#define TIMELINES_SHOWN 10

static uint64_t live_peak(const struct report_process *p)
{
    return p->timeline_count ? p->timeline[report_timeline_peak(p, false)].live_bytes : 0;
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

void report_section_timeline(struct document *d, const struct report *r)
{
    if (!report_has_timeline(r))
        return;
    report_doc_heading(d, 2, "Memory over time");
    report_doc_paragraph(d,
                         "Points taken by the interposer every period while a process runs "
                         "(seconds from each process's start; where a process has fewer, it says "
                         "why): a peak shorter than the period falls between two points, and live "
                         "bytes are as exact as the peak in Totals (see Precision).");
    if (r->process_count > TIMELINES_SHOWN)
        report_doc_paragraph(
            d,
            "The %d processes whose live bytes rose highest, of %zu (the JSON report "
            "holds every point of each):",
            TIMELINES_SHOWN, r->process_count);
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        if (!shown(r, i))
            continue;
        if (p->timeline_count == 0) {
            report_doc_paragraph(
                d, "pid %" PRIu64 ": no timeline (an older dump, or QAUDIT_TIMELINE=off).", p->pid);
            continue;
        }
        process_line(d, p);
        if (report_timeline_drawable(p))
            report_doc_html_view(d, VIEW_TIMELINE, i);
    }
}
