/* Memory over time: the series of one process's dumps merged into one (union of their points by
 * time, each moment once), kept per process: two processes' memory is not one curve. */
#include "common/grow_array.h"
#include "reports_reading.h"

#include <stdlib.h>
#include <string.h>

static int by_time(const void *a, const void *b)
{
    uint64_t x = ((const struct report_point *)a)->time_ns;
    uint64_t y = ((const struct report_point *)b)->time_ns;
    return x < y ? -1 : x > y;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorted, and each time once: a point two dumps both wrote is the same point. */
static size_t sorted_unique_points(struct report_point *p, size_t n)
{
    qsort(p, n, sizeof *p, by_time);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (kept == 0 || p[kept - 1].time_ns != p[i].time_ns)
            p[kept++] = p[i];
    return kept;
}

static size_t sorted_unique_times(uint64_t *t, size_t n)
{
    qsort(t, n, sizeof *t, by_value);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (kept == 0 || t[kept - 1] != t[i])
            t[kept++] = t[i];
    return kept;
}

/* Adds points and times to a's series, then sorts and deduplicates them. */
static void add_series(struct report_process *a, const struct report_point *points, size_t count,
                       const uint64_t *times, size_t time_count)
{
    /* One more than needed each: never NULL once added to, as the readers had them. */
    if (array_reserve(&a->timeline, &a->timeline_capacity, a->timeline_count + count + 1,
                      sizeof *a->timeline)) {
        struct report_point *p = a->timeline;
        if (count > 0)
            memcpy(p + a->timeline_count, points, count * sizeof *p);
        a->timeline_count = sorted_unique_points(p, a->timeline_count + count);
    }
    if (array_reserve(&a->dump_times, &a->dump_time_capacity, a->dump_time_count + time_count + 1,
                      sizeof *a->dump_times)) {
        uint64_t *t = a->dump_times;
        if (time_count > 0)
            memcpy(t + a->dump_time_count, times, time_count * sizeof *t);
        a->dump_time_count = sorted_unique_times(t, a->dump_time_count + time_count);
    }
}

/* A single dump's moment is its dump_time_ns; a merged process already lists its dumps'. */
static void own_times(const struct report_process *p, const uint64_t **times, size_t *count)
{
    if (p->dump_time_count > 0) {
        *times = p->dump_times;
        *count = p->dump_time_count;
    } else {
        *times = &p->dump_time_ns;
        *count = 1;
    }
}

void report_timeline_copy(struct report_process *to, const struct report_process *from)
{
    const uint64_t *times;
    size_t time_count;
    own_times(from, &times, &time_count);
    to->timeline = NULL; /* from's, copied with the rest of *from: to's own from here */
    to->timeline_count = to->timeline_capacity = 0;
    to->dump_times = NULL;
    to->dump_time_count = to->dump_time_capacity = 0;
    add_series(to, from->timeline, from->timeline_count, times, time_count);
}

void report_timeline_absorb(struct report *into, const struct report_process *from)
{
    for (size_t i = 0; i < into->process_count; i++) {
        struct report_process *p = &into->processes[i];
        if (p->pid != from->pid || p->start_time_ns != from->start_time_ns ||
            strcmp(p->exe, from->exe) != 0)
            continue;
        const uint64_t *times;
        size_t time_count;
        own_times(from, &times, &time_count);
        add_series(p, from->timeline, from->timeline_count, times, time_count);
        if (p->timeline_period_ns == 0)
            p->timeline_period_ns = from->timeline_period_ns;
        return;
    }
}

void report_timeline_free(struct report_process *p)
{
    free(p->timeline);
    free(p->dump_times);
    p->timeline = NULL;
    p->dump_times = NULL;
    p->timeline_count = p->dump_time_count = 0;
    p->timeline_capacity = p->dump_time_capacity = 0;
}

size_t report_timeline_peak(const struct report_process *p, bool rss)
{
    size_t peak = SIZE_MAX;
    for (size_t i = 0; i < p->timeline_count; i++) {
        uint64_t v = rss ? p->timeline[i].rss_bytes : p->timeline[i].live_bytes;
        uint64_t best = peak == SIZE_MAX ? 0
                        : rss            ? p->timeline[peak].rss_bytes
                                         : p->timeline[peak].live_bytes;
        if (peak == SIZE_MAX || v > best)
            peak = i;
    }
    return peak;
}

bool report_has_timeline(const struct report *r)
{
    for (size_t i = 0; i < r->process_count; i++)
        if (r->processes[i].timeline_count > 0)
            return true;
    return false;
}
