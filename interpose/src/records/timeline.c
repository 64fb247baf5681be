/* Memory over time: the writer thread takes a point every QAUDIT_TIMELINE milliseconds (time,
 * live bytes, allocations, resident set) into a fixed array; when the array is full every other
 * point goes and the period doubles, so the series always spans the whole run in bounded memory.
 * A large move of the live bytes wakes the writer for a point of its own; while no writer runs
 * (it starts lazily, output/writer.c, or could not) the allocating threads take the points
 * themselves, at the period when they allocate (their looks, output/looks.c) and as their live
 * bytes move (qa_timeline_moved). Each dump writes the series and a last point taken as it is
 * written.
 * Context: the writer thread or an allocating one takes the points, each dump writes them (both
 * under the dump lock). */
#include <errno.h>
#include <time.h>

#include "records.h"

#define TIMELINE_POINTS 1024

struct point {
    uint64_t time_ns; /* CLOCK_REALTIME, as the dump's own times */
    int64_t live_bytes;
    uint64_t allocs, rss_bytes;
};

/* Appended by the writer thread, read by dumps: both under the dump lock. */
static struct point points[TIMELINE_POINTS];
static size_t point_count QA_FORK_STATE;
static uint64_t period_ns QA_FORK_STATE; /* 0: off */
static uint64_t next_due QA_FORK_STATE;  /* CLOCK_MONOTONIC */
/* The last point's live bytes, for qa_timeline_moved; a move the writer thread is to take a
 * point for, and how it is woken for one. */
static int64_t last_live QA_FORK_STATE;
static atomic_bool move_wanted QA_FORK_STATE;
static void (*wake_writer)(void);

static struct point current_point(uint64_t now_ns)
{
    struct qa_counters c;
    qa_sum_counters(&c, NULL);
    int64_t live = qa_live_bytes_total(&c);
    qa_peak_observe(live);
    return (struct point){now_ns, live, qa_counters_allocs(&c), qa_resident_bytes()};
}

/* Every other point kept, the first one included; the period doubles. */
static void thin(void)
{
    size_t kept = 0;
    for (size_t i = 0; i < point_count; i += 2)
        points[kept++] = points[i];
    point_count = kept;
    period_ns *= 2;
}

/* The first point at once in the image that loaded the preload; a forked child takes its first
 * a period after its fork (its start is its parent's point, and a short-lived child takes none):
 * at once when its writer starts later than that (output/writer.c). forked_ns: the fork's
 * moment (CLOCK_MONOTONIC), 0 in the image that loaded the preload. */
void qa_timeline_start(uint64_t forked_ns)
{
    period_ns = (uint64_t)qa_cfg.timeline_ms * 1000000u;
    point_count = 0;
    last_live = qa_live_published(); /* a forked child's: what it inherited */
    atomic_store(&move_wanted, false);
    next_due = forked_ns ? forked_ns + period_ns : qa_monotonic_ns();
}

bool qa_timeline_on(void)
{
    return period_ns != 0;
}

/* When the next point is due, on CLOCK_MONOTONIC; UINT64_MAX when the timeline is off. */
uint64_t qa_timeline_due(void)
{
    return period_ns ? next_due : UINT64_MAX;
}

/* The caller holds the dump lock. */
static void append(struct point p)
{
    if (point_count == TIMELINE_POINTS)
        thin();
    points[point_count++] = p;
    last_live = p.live_bytes;
    next_due = qa_monotonic_ns() + period_ns;
}

/* The writer thread's call once qa_timeline_due has passed. The figures are gathered before the
 * dump lock is taken (reading /proc must not hold up a dump). */
void qa_timeline_take(void)
{
    if (period_ns == 0)
        return;
    struct point p = current_point(qa_now_ns());
    qa_dump_lock();
    append(p);
    qa_dump_unlock();
}

void qa_timeline_wake_with(void (*wake)(void))
{
    wake_writer = wake;
}

bool qa_timeline_move_wanted(void)
{
    return atomic_load_explicit(&move_wanted, memory_order_relaxed) &&
           atomic_exchange(&move_wanted, false);
}

/* A point taken by an allocating thread (the writer waits: output/writer.c): it reads
 * /proc/self/statm (about 15 us here), never waits (it is skipped while a dump is being written)
 * and keeps the program's errno. */
static void take_here(struct qa_thread *t)
{
    int saved_errno = errno;
    bool was_busy = qa_guard(t);
    struct point p = current_point(qa_now_ns());
    if (qa_dump_lock_try()) {
        append(p);
        qa_dump_unlock();
    }
    qa_guard_restore(t, was_busy);
    errno = saved_errno;
}

/* A point, besides the period's, when the live bytes moved by an eighth of the last point's and
 * at least a MiB since it (live: as just published), so that a burst's end is in the series
 * within an eighth at a cost bounded by the MiB moved, whatever the period: the writer thread
 * is woken for it. While the writer waits (it starts lazily: output/writer.c), the allocating
 * thread takes that point itself, and the period's too, so that memory a program takes at its
 * start and then holds while it sleeps (it makes no call that would start the writer) is in the
 * series when taken. */
void qa_timeline_moved(struct qa_thread *t, int64_t live, bool writer_waiting)
{
    if (period_ns == 0)
        return;
    int64_t moved = live > last_live ? live - last_live : last_live - live;
    int64_t enough = last_live / 8 > (1 << 20) ? last_live / 8 : (1 << 20);
    if (!writer_waiting) {
        if (moved >= enough && wake_writer != NULL && !atomic_exchange(&move_wanted, true))
            wake_writer();
        return;
    }
    if (qa_monotonic_ns() < next_due && moved < enough)
        return;
    take_here(t);
}

/* A thread's look while the writer waits (output/looks.c): the period's point, when due (now:
 * CLOCK_MONOTONIC). */
void qa_timeline_point_if_due(struct qa_thread *t, uint64_t now)
{
    if (period_ns != 0 && now >= next_due)
        take_here(t);
}

/* The series in a dump, ending with a point at the dump's moment now_ns (the caller holds the
 * dump lock; async-signal-safe: what it reads is memory, and /proc through the private
 * descriptors). */
void qa_timeline_write(struct qa_json *j, uint64_t now_ns)
{
    if (period_ns == 0)
        return;
    qa_json_key(j, QA_KEY(timeline_period_ns)), qa_json_u64(j, period_ns);
    qa_json_key(j, QA_KEY(timeline));
    qa_json_begin_array(j);
    struct point now = current_point(now_ns);
    for (size_t i = 0; i <= point_count; i++) {
        const struct point *p = i < point_count ? &points[i] : &now;
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(time_ns)), qa_json_u64(j, p->time_ns);
        qa_json_key(j, QA_KEY(live_bytes)), qa_json_i64(j, p->live_bytes);
        qa_json_key(j, QA_KEY(allocs)), qa_json_u64(j, p->allocs);
        qa_json_key(j, QA_KEY(rss_bytes)), qa_json_u64(j, p->rss_bytes);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
}
