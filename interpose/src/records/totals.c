/* The process's totals, below every other file of records/ that reads them: the sums over the
 * thread records (qa_sum_counters), live bytes and blocks with what was inherited or is known
 * from before an attach (qa_inherited, which inherited.c fills at a fork and an attach), and the
 * shared live and peak figures the records publish into in batches (stats.c publishes, the
 * timeline, the anonymous-memory check, a fork and every dump read). Calls nothing of records/
 * but the inline functions of records.h, so that the files that read the totals and the one that
 * publishes them call down here, never round.
 * Context: the publishing calls on the fast path's rare branches (any thread, no lock, nothing
 * allocates); the sums on dumps, timeline points and forks, without locks (a snapshot). */
#include <string.h>

#include "records.h"

struct qa_inherited qa_inherited QA_FORK_STATE;

/* A record publishes its live-byte delta once it reaches QA_LIVE_BATCH: peak_live_bytes is exact
 * to within (records that published - 1) * QA_LIVE_BATCH; exact while a single record counts.
 * counting_threads: threads that made a counted allocation; counting_records: records that
 * published live bytes (each holds less than QA_LIVE_BATCH unpublished). */
static atomic_uint_fast64_t counting_threads QA_FORK_STATE, counting_records QA_FORK_STATE;
static _Atomic int64_t live_published QA_FORK_STATE, peak_published QA_FORK_STATE;

void qa_totals_count_thread(void)
{
    atomic_fetch_add(&counting_threads, 1);
}

void qa_totals_count_record(void)
{
    atomic_fetch_add(&counting_records, 1);
}

/* A record's publication of delta live bytes; the total after it. */
int64_t qa_totals_publish(int64_t delta)
{
    return atomic_fetch_add_explicit(&live_published, delta, memory_order_relaxed) + delta;
}

/* A new account (a forked child's, a second attach's): no thread counted, live bytes and the
 * peak start from what was inherited. */
void qa_totals_reset(void)
{
    atomic_store(&counting_threads, 0);
    atomic_store(&counting_records, 0);
    atomic_store(&live_published, qa_inherited.bytes);
    atomic_store(&peak_published, qa_inherited.bytes);
}

void qa_sum_counters(struct qa_counters *out, uint64_t *count)
{
    memset(out, 0, sizeof *out);
    for (struct qa_thread *t = qa_threads_head(); t != NULL; t = t->next) {
        const struct qa_counters *c = &t->c;
        out->reallocs += c->reallocs;
        out->realloc_in_place += c->realloc_in_place;
        out->realloc_moved += c->realloc_moved;
        out->failed += c->failed;
        out->temporary += c->temporary;
        out->inherited_freed += c->inherited_freed;
        out->inherited_reallocated += c->inherited_reallocated;
        out->inherited_freed_bytes += c->inherited_freed_bytes;
        out->bytes_requested += c->bytes_requested;
        out->bytes_usable += c->bytes_usable;
        out->bytes_freed_usable += c->bytes_usable - (uint64_t)qa_thread_live_bytes(t);
        for (int i = 0; i < QA_CALL_COUNT; i++)
            out->by_call[i] += c->by_call[i];
        for (int i = 0; i < QA_SIZE_BUCKETS; i++)
            out->size_hist[i] += c->size_hist[i];
        for (size_t i = 0; i <= QA_DIRECT_REQUESTED / 16; i++)
            out->size_hist[qa_size_bucket(16 * i)] += t->requested_direct[i];
    }
    if (count)
        *count = atomic_load(&counting_threads);
}

int64_t qa_live_published(void)
{
    return atomic_load_explicit(&live_published, memory_order_relaxed);
}

/* Raises the peak to live bytes seen: the batched totals above, and the exact sums a timeline
 * point or a dump takes, so that no figure of a dump exceeds its peak. */
void qa_peak_observe(int64_t live)
{
    int64_t peak = atomic_load_explicit(&peak_published, memory_order_relaxed);
    while (live > peak &&
           !atomic_compare_exchange_weak_explicit(&peak_published, &peak, live,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

/* The best bound available: the batched global peak, or a single thread's exact own peak (in a
 * forked child, on top of what it inherited). */
int64_t qa_peak_live(void)
{
    int64_t peak = atomic_load(&peak_published);
    for (struct qa_thread *t = qa_threads_head(); t != NULL; t = t->next)
        if (qa_inherited.bytes + t->peak_usable > peak)
            peak = qa_inherited.bytes + t->peak_usable;
    return peak;
}

/* The records that published live bytes: precision.peak_live_bytes_within is this less one,
 * times QA_LIVE_BATCH (the unpublished part is per record, whichever threads used it). */
uint64_t qa_thread_total(void)
{
    return atomic_load(&counting_records);
}

/* After an attach what was live before is unknown: each free of such a block (one the own-block
 * map does not know) shows one more, so the inheritance is the larger of what is known of it (a
 * forked child's at its fork) and what has been freed of it. Live figures never go negative. */
static int64_t at_least(int64_t known, uint64_t freed)
{
    if (qa_inherited.attached_at_ns == 0 || (int64_t)freed < known)
        return known;
    return (int64_t)freed;
}

int64_t qa_live_bytes_total(const struct qa_counters *c)
{
    return at_least(qa_inherited.bytes, c->inherited_freed_bytes) + qa_counters_live_bytes(c);
}

int64_t qa_live_blocks_total(const struct qa_counters *c)
{
    return at_least(qa_inherited.blocks, c->inherited_freed + c->inherited_reallocated) +
           qa_counters_live_blocks(c);
}
