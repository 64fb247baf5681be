/* Counting in per-thread records (threads.c): sums over the records at dump time, the
 * usable-size histogram, and live/peak bytes published in batches so threads do not share a hot
 * cache line.
 * Context: each thread counts into its own record from its fast and slow paths (no lock);
 * dumps sum the records without locks. */
#include <string.h>

#include "records.h"

struct usable_slot {
    atomic_size_t size; /* 0: free */
    atomic_uint_fast64_t count;
};
static struct usable_slot usable_slots[QA_USABLE_SLOTS];
static atomic_uint_fast64_t usable_overflow QA_FORK_STATE;
/* Any slot claimed: only then do the fork's reset and the dump read them. */
static atomic_bool usable_slots_used QA_FORK_STATE;

/* A record's new owner (a new thread, or a later one reusing the record) has not counted yet:
 * its first counted call comes to qa_live_publish, live_at_publish being far out of range, and
 * the record's published figure waits in live_resume. Nothing is added to the fast path. */
void qa_live_new_owner(struct qa_thread *t)
{
    if (t->live_at_publish != QA_LIVE_NEVER_PUBLISHED)
        t->live_resume = t->live_at_publish;
    t->live_at_publish = QA_LIVE_NEVER_PUBLISHED;
    t->publish_up = t->publish_down = -1; /* the first counted call publishes */
    t->allocs_before_owner = qa_counters_allocs(&t->c);
    t->owner_allocated = false;
}

/* The owner's first counted call, and every QA_LIVE_BATCH of live bytes after it. Until the owner
 * has allocated (its first calls may be frees of other threads' blocks), the record publishes
 * all but QA_LIVE_BATCH - 1 bytes, so that the first allocation, however small, comes back here
 * to count the thread; the unpublished part stays below the batch either way. */
void qa_live_publish(struct qa_thread *t, int64_t live)
{
    qa_assert(t == qa_tls_thread()); /* a record counts only for its own thread */
    if (t->live_at_publish == QA_LIVE_NEVER_PUBLISHED) {
        t->live_at_publish = t->live_resume;
        if (!t->record_counted) {
            t->record_counted = true;
            qa_totals_count_record();
        }
    }
    int64_t target = live;
    if (!t->owner_allocated) {
        if (qa_counters_allocs(&t->c) != t->allocs_before_owner) {
            t->owner_allocated = true;
            qa_totals_count_thread();
        } else {
            target = live - (QA_LIVE_BATCH - 1);
        }
    }
    int64_t delta = target - t->live_at_publish;
    t->live_at_publish = target;
    t->publish_up = target + (QA_LIVE_BATCH - 1) - live;
    t->publish_down = live - target + (QA_LIVE_BATCH - 1);
    int64_t total = qa_totals_publish(delta);
    qa_peak_observe(total);
    /* A writer that has not started (output/writer.c, "lazily"): the timeline's points for
     * large moves are taken here (the period's at the thread's looks, output/looks.c). */
    bool waiting = atomic_load_explicit(&qa_writer_waiting, memory_order_relaxed);
    qa_timeline_moved(t, total, waiting);
}

size_t qa_live_new_peak(struct qa_thread *t, size_t usable)
{
    t->peak_usable -= t->below_peak;
    t->below_peak = 0;
    return usable;
}

void qa_live_publish_own(struct qa_thread *t)
{
    qa_live_publish(t, qa_thread_live_bytes(t));
}

/* The smallest size that falls in bucket (1 for the first). */
size_t qa_size_bucket_floor(unsigned bucket)
{
    if (bucket < 32)
        return bucket * 16 + 1;
    return ((size_t)1 << (bucket - 32 + 9)) + 1;
}

static void usable_global_add(size_t usable, uint64_t count)
{
    size_t h = (usable * 0x9e3779b97f4a7c15ull) >> 40;
    for (size_t i = 0; i < QA_USABLE_SLOTS; i++) {
        struct usable_slot *slot = &usable_slots[(h + i) % QA_USABLE_SLOTS];
        size_t seen = atomic_load_explicit(&slot->size, memory_order_relaxed);
        if (seen == 0) {
            size_t expected = 0;
            if (atomic_compare_exchange_strong(&slot->size, &expected, usable) ||
                expected == usable) {
                if (!atomic_load_explicit(&usable_slots_used, memory_order_relaxed))
                    atomic_store(&usable_slots_used, true);
                atomic_fetch_add_explicit(&slot->count, count, memory_order_relaxed);
                return;
            }
            seen = expected;
        }
        if (seen == usable) {
            atomic_fetch_add_explicit(&slot->count, count, memory_order_relaxed);
            return;
        }
    }
    atomic_fetch_add_explicit(&usable_overflow, count, memory_order_relaxed);
}

/* Usable sizes past the direct table: each thread counts them in its own small table; a size that
 * finds no room there goes to the shared table directly. */
size_t qa_usable_hist_add_slow(struct qa_thread *t, size_t usable)
{
    size_t h = (usable >> 4) * 0x9e3779b97f4a7c15ull >> 58; /* 6 bits: QA_LOCAL_USABLE */
    for (size_t i = 0; i < 4; i++) {
        struct qa_usable_local *slot = &t->usable[(h + i) & (QA_LOCAL_USABLE - 1)];
        if (slot->size == usable) {
            slot->count++;
            return usable;
        }
        if (slot->size == 0) {
            slot->size = usable;
            slot->count = 1;
            return usable;
        }
    }
    usable_global_add(usable, 1);
    return usable;
}

size_t qa_usable_hist(struct qa_usable_class *classes, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; usable_slots_used && i < QA_USABLE_SLOTS && n < max; i++) {
        size_t size = atomic_load(&usable_slots[i].size);
        if (size == 0)
            continue;
        classes[n++] = (struct qa_usable_class){size, atomic_load(&usable_slots[i].count)};
    }
    /* Fold in every thread's local tables (read without stopping it: a snapshot). */
    for (struct qa_thread *t = qa_threads_head(); t != NULL; t = t->next)
        for (size_t i = 0; i < QA_LOCAL_USABLE + QA_DIRECT_USABLE / 8 + 1; i++) {
            bool direct = i >= QA_LOCAL_USABLE;
            size_t size = direct ? (i - QA_LOCAL_USABLE) * 8 : t->usable[i].size;
            uint64_t count = direct ? t->usable_direct[i - QA_LOCAL_USABLE] : t->usable[i].count;
            if (count == 0)
                continue;
            size_t k = 0;
            while (k < n && classes[k].usable != size)
                k++;
            if (k == n) {
                if (n == max)
                    continue;
                classes[n++] = (struct qa_usable_class){size, 0};
            }
            classes[k].count += count;
        }
    /* Insertion sort by size: the dump lists classes in order. */
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && classes[k - 1].usable > classes[k].usable; k--) {
            struct qa_usable_class c = classes[k];
            classes[k] = classes[k - 1];
            classes[k - 1] = c;
        }
    return n;
}

uint64_t qa_usable_overflow(void)
{
    return atomic_load(&usable_overflow);
}

/* One record's counts back to zero (a forked child's one thread, every record at an attach). */
static void reset_record(struct qa_thread *t)
{
    memset(&t->c, 0, sizeof t->c);
    t->c.rng = 0x9e3779b97f4a7c15ull; /* the fault injector's stream of a first record */
    memset(t->usable, 0, sizeof t->usable);
    memset(t->usable_direct, 0, sizeof t->usable_direct);
    memset(t->requested_direct, 0, sizeof t->requested_direct);
    /* site_deltas: already empty, qa_sites_flush_all cleared every slot in use (a memset
     * here would copy 24 KiB of pages in every child) */
    t->peak_usable = 0;
    t->below_peak = 0;
    t->live_at_publish = 0;
    t->record_counted = false;
    t->last_alloc = 0; /* the last block before: its free is not a temporary of the new account */
    qa_live_new_owner(t);
}

static void reset_shared(void)
{
    qa_totals_reset();
    for (size_t i = 0; usable_slots_used && i < QA_USABLE_SLOTS; i++) {
        QA_RESET(usable_slots[i].size, 0);
        QA_RESET(usable_slots[i].count, 0);
    }
    atomic_store(&usable_overflow, 0);
}

/* The forked child counts its own life: counters start from zero, its one thread is the only
 * one, and the other threads' records are dropped (they do not exist in the child). What it
 * inherited (inherited.c, taken before this) is where its live bytes and its peak start. */
void qa_stats_reset_after_fork(void)
{
    struct qa_thread *self = qa_threads_reset_after_fork();
    if (self != NULL)
        reset_record(self);
    reset_shared();
}

/* A second attach starts a new account: every record's counts from zero (the program's threads
 * are stopped and the first attach's writer has ended, so no record is being written). */
void qa_stats_reset_for_attach(void)
{
    qa_sites_flush_all();
    for (struct qa_thread *t = qa_threads_head(); t != NULL; t = t->next)
        reset_record(t);
    reset_shared();
}
