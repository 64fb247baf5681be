/* Why a process has fewer timeline points than its life at the period would give: the stretches
 * of its life longer than two periods without a point (the time before its first point
 * included), each with its reason, from who took the points (the dump's timeline_writer). The
 * writer thread takes one every period while it runs, so a stretch while it ran is a process that
 * did not run (stopped, or given no processor time); before it starts (lazily), in a process
 * that forks (it keeps one thread), after it ended with the main thread, or when it could not
 * start, the allocating threads take them as they allocate, so a stretch then is a process that
 * allocated rarely or not at all. */
#include <stdio.h>

#include "reports_content.h"

/* The time both [a0, a1) and [b0, b1) hold. */
static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t from = a0 > b0 ? a0 : b0, to = a1 < b1 ? a1 : b1;
    return to > from ? to - from : 0;
}

static enum gap_reason reason_of(const struct report_process *p, uint64_t from, uint64_t to)
{
    if (p->writer == WRITER_UNKNOWN)
        return GAP_UNKNOWN;
    uint64_t ran_to = p->writer_stopped_ns ? p->writer_stopped_ns : UINT64_MAX;
    /* The writer ran a whole period within the stretch: it would have taken a point. */
    if (p->writer_started_ns != 0 &&
        overlap(from, to, p->writer_started_ns, ran_to) >= p->timeline_period_ns)
        return GAP_NOT_RUNNING;
    if (p->writer == WRITER_FAILED)
        return GAP_WRITER_FAILED;
    if (p->writer == WRITER_ENDED && p->writer_stopped_ns != 0 && p->writer_stopped_ns < to)
        return GAP_WRITER_ENDED;
    return p->writer_forks ? GAP_PROCESS_FORKS : GAP_WRITER_WAITING;
}

size_t report_timeline_gaps(const struct report_process *p, struct timeline_gap *out, size_t max)
{
    uint64_t period = p->timeline_period_ns;
    if (p->timeline_count == 0 || period == 0)
        return 0;
    size_t n = 0;
    uint64_t before = p->start_time_ns;
    for (size_t i = 0; i < p->timeline_count; i++) {
        uint64_t at = p->timeline[i].time_ns;
        if (at > before && at - before > 2 * period) {
            if (n < max)
                out[n] = (struct timeline_gap){before, at, reason_of(p, before, at)};
            n++;
        }
        before = at > before ? at : before;
    }
    return n;
}

uint64_t report_timeline_life_ns(const struct report_process *p)
{
    uint64_t end = p->timeline_count ? p->timeline[p->timeline_count - 1].time_ns : 0;
    return end > p->start_time_ns ? end - p->start_time_ns : 0;
}

/* A chart of fewer points, or with half its life or more in one stretch without a point (from
 * the start to the first point, or between two), is an empty frame with a line at one end: its
 * text says why instead. Stretches spread over the life (a loaded machine's writer starved now
 * and then) leave a line that shows the run. */
bool report_timeline_drawable(const struct report_process *p)
{
    if (p->timeline_count < 3)
        return false;
    uint64_t before = p->start_time_ns, longest = 0;
    for (size_t i = 0; i < p->timeline_count; i++) {
        uint64_t at = p->timeline[i].time_ns;
        if (at > before && at - before > longest)
            longest = at - before;
        before = at > before ? at : before;
    }
    return longest * 2 < report_timeline_life_ns(p);
}

const char *report_timeline_gap_reason_name(enum gap_reason reason)
{
    static const char *const names[] = {"process_not_running", "writer_waiting", "process_forks",
                                        "writer_failed",       "writer_ended",   "unknown"};
    return names[reason];
}

void report_timeline_gap_sentence(const struct report_process *p, const struct timeline_gap *g,
                                  char *out, size_t size)
{
    int n = snprintf(out, size, "no point from %.2f s to %.2f s",
                     report_seconds_since_start(p, g->from_ns),
                     report_seconds_since_start(p, g->to_ns));
    if (n < 0 || (size_t)n >= size)
        return;
    char *rest = out + n;
    size_t room = size - (size_t)n;
    switch (g->reason) {
    case GAP_NOT_RUNNING:
        snprintf(rest, room,
                 " although its writer thread ran: the process did not run then "
                 "(stopped, or given no processor time)");
        break;
    case GAP_WRITER_WAITING: {
        double delay = (double)p->writer_delay_ms / 1000,
               from = report_seconds_since_start(p, g->from_ns);
        snprintf(rest, room,
                 ": the process made next to no allocation from %.2f s to %.2f s, and its "
                 "writer thread, which takes a point every period, starts only at an "
                 "allocation after %.2f s (until then a point comes with an allocation)",
                 from > delay ? from : delay, report_seconds_since_start(p, g->to_ns), delay);
        break;
    }
    case GAP_PROCESS_FORKS:
        snprintf(rest, room,
                 ": the process forks children, so it keeps one thread as natively (a writer "
                 "thread would put every later fork on glibc's slower path) and a point comes "
                 "only with an allocation, and it made next to none then");
        break;
    case GAP_WRITER_FAILED:
        snprintf(rest, room,
                 ": its writer thread could not start, so a point comes only with an "
                 "allocation, and the process made next to none then");
        break;
    case GAP_WRITER_ENDED:
        snprintf(rest, room,
                 ": its writer thread ended with the main thread (pthread_exit) at %.2f s, so "
                 "a point comes only with an allocation, and the process made next to none then",
                 report_seconds_since_start(p, p->writer_stopped_ns));
        break;
    case GAP_UNKNOWN:
        snprintf(rest, room, " (a dump older than its timeline_writer: why is not known)");
        break;
    }
}

double report_seconds_since_start(const struct report_process *p, uint64_t time_ns)
{
    return ((double)time_ns - (double)p->start_time_ns) / 1e9;
}
