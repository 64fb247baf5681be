/* The JSON report's `timeline` (docs/report-format.md): each process's series as reading/
 * merged it (timeline_series.c), its peaks, its writer's state and the gaps content/ tells
 * (timeline_gaps.c). */
#include <stdint.h>
#include <stdlib.h>

#include "reports_render.h"

static json_t *u64(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *peak_json(const struct report_process *p, bool rss)
{
    size_t i = report_timeline_peak(p, rss);
    if (i == SIZE_MAX)
        return json_null();
    const struct report_point *q = &p->timeline[i];
    return json_pack("{s:o, s:o}", "time_ns", u64(q->time_ns), rss ? "rss_bytes" : "live_bytes",
                     u64(rss ? q->rss_bytes : q->live_bytes));
}

static json_t *writer_json(const struct report_process *p)
{
    static const char *const states[] = {"unknown", "running", "waiting", "ended", "failed"};
    json_t *o = json_pack("{s:s}", "state", states[p->writer]);
    if (p->writer_started_ns)
        json_object_set_new(o, "started_ns", u64(p->writer_started_ns));
    if (p->writer_stopped_ns)
        json_object_set_new(o, "stopped_ns", u64(p->writer_stopped_ns));
    return o;
}

/* Every stretch without a point longer than two periods, with its reason (timeline_gaps.c). */
static json_t *gaps_json(const struct report_process *p)
{
    json_t *list = json_array();
    size_t n = report_timeline_gaps(p, NULL, 0);
    struct timeline_gap *gaps = calloc(n + 1, sizeof *gaps);
    if (gaps == NULL)
        return list;
    report_timeline_gaps(p, gaps, n);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, json_pack("{s:o, s:o, s:s}", "from_ns", u64(gaps[i].from_ns),
                                              "to_ns", u64(gaps[i].to_ns), "reason",
                                              report_timeline_gap_reason_name(gaps[i].reason)));
    free(gaps);
    return list;
}

static json_t *process_json(const struct report_process *p)
{
    json_t *points = json_array(), *times = json_array();
    for (size_t i = 0; i < p->timeline_count; i++) {
        const struct report_point *q = &p->timeline[i];
        json_array_append_new(points, json_pack("{s:o, s:o, s:o, s:o}", "time_ns", u64(q->time_ns),
                                                "live_bytes", u64(q->live_bytes), "allocs",
                                                u64(q->allocs), "rss_bytes", u64(q->rss_bytes)));
    }
    for (size_t i = 0; i < p->dump_time_count; i++)
        json_array_append_new(times, u64(p->dump_times[i]));
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "pid", u64(p->pid),
                     "start_time_ns", u64(p->start_time_ns), "period_ns",
                     u64(p->timeline_period_ns), "dump_times_ns", times, "points", points,
                     "peak_live", peak_json(p, false), "peak_rss", peak_json(p, true), "writer",
                     writer_json(p), "gaps", gaps_json(p));
}

json_t *report_timeline_json(const struct report *r)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->process_count; i++)
        if (r->processes[i].timeline_count > 0)
            json_array_append_new(list, process_json(&r->processes[i]));
    return list;
}
