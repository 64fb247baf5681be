/* The fast path's counting: what a malloc or free that needs nothing more (no stack, no queue
 * operation under way, sizes from glibc's headers) does to the thread's record, inline in the
 * entry points (entry/malloc.c) and in the slow paths' records (recording.h). None of these
 * functions allocates, takes a lock or calls out, except the rare branches named: publishing
 * live bytes every 64 KiB (qa_live_publish), a usable size past the direct table
 * (qa_usable_hist_add_slow), a new sampling interval (qa_sample_interval). The calls run one
 * way: down to stats.c (and sampling.c), which never include this header.
 * Context: the malloc fast path, without the re-entrancy guard (nothing here can allocate).
 * What they touch, all in the calling thread's record (types.h): last_alloc, the counters c
 * (by_call, bytes_requested, bytes_usable, temporary, size_hist), requested_direct,
 * usable_direct, below_peak, publish_up, publish_down, peak_usable, sample_left, look_left (and
 * the gate's QA_GATE_LOOK); and qa_cfg's sampling settings. A forked child's own-block marks
 * (qa_mark_own_block, qa_count_inherited_free) are kept off the parent's fast path: a call
 * there would make every malloc and free save and restore registers (11 instructions a pair,
 * measured). */
#ifndef QAUDIT_COUNTING_H
#define QAUDIT_COUNTING_H

#include "records.h"

/* Each record tracks its own live bytes and peak without atomics, publishing them to the shared
 * total in batches (QA_LIVE_BATCH, records.h; stats.c publishes).
 * Live bytes are not a word of their own: below_peak (how far under the thread's peak) and the
 * two publication margins (QA_LIVE_BATCH - 1 each way from the last publication) move by the
 * block's usable size and are tested by sign alone (one flag, so the subtraction's), so that a
 * malloc moves three words and tests two and a free moves three and tests one, with no load of
 * a total to subtract (before: usable and freed sums, live their difference, compared with the
 * peak and with the last publication: 11 instructions a pair more, bench/RESULTS.md). */

/* After an allocation of usable bytes: the peak can only rise then. The rare branches call out
 * (stats.c) and read the words themselves, so that the fast path keeps none of them in a
 * register: each is one subtraction or addition in memory, tested by the flags it sets. The
 * rare calls before a later use of usable give it back (as qa_usable_hist_add_slow does), so
 * that the caller keeps no copy of it across them: with one, a stack slot and the frame's
 * adjustment on every malloc. */
QA_CTX_FAST static inline void qa_live_grew(struct qa_thread *t, size_t usable)
{
    if (__builtin_expect((t->below_peak -= (int64_t)usable) < 0, 0))
        usable = qa_live_new_peak(t, usable);
    t->publish_down += (int64_t)usable;
    if (__builtin_expect((t->publish_up -= (int64_t)usable) < 0, 0))
        qa_live_publish_own(t);
}

/* After a free of usable bytes. */
QA_CTX_FAST static inline void qa_live_shrank(struct qa_thread *t, size_t usable)
{
    t->below_peak += (int64_t)usable;
    t->publish_up += (int64_t)usable;
    if (__builtin_expect((t->publish_down -= (int64_t)usable) < 0, 0))
        qa_live_publish_own(t);
}

/* A resize: live bytes moved by the new block's usable size less the old one's (either way). */
static inline void qa_live_moved(struct qa_thread *t, int64_t moved)
{
    if ((t->below_peak -= moved) < 0)
        qa_live_new_peak(t, 0);
    t->publish_down += moved;
    t->publish_up -= moved;
    if (t->publish_up < 0 || t->publish_down < 0)
        qa_live_publish_own(t);
}
/* The requested-size histogram. Every step of requested_direct lies in one bucket: the buckets'
 * bounds are multiples of 16. */
QA_CTX_FAST static inline void qa_size_hist_add(struct qa_thread *t, size_t size)
{
    if (__builtin_expect(size <= QA_DIRECT_REQUESTED, 1)) {
        t->requested_direct[(size + 15) / 16]++;
        return;
    }
    t->c.size_hist[qa_size_bucket(size)]++;
}

/* Usable sizes are the allocator's size classes, a small set; the common ones are counted in a
 * table indexed by size. Returns usable, as the rare branch's call does (see qa_live_grew). */
QA_CTX_FAST static inline size_t qa_usable_hist_add(struct qa_thread *t, size_t usable)
{
    if (__builtin_expect(usable <= QA_DIRECT_USABLE && (usable & 7) == 0, 1)) {
        /* usable_direct[usable / 8], addressed by usable itself: GCC otherwise divides and
         * multiplies back (two instructions) once usable is used after this. */
        ++*(uint64_t *)((char *)t->usable_direct + usable);
        return usable;
    }
    return qa_usable_hist_add_slow(t, usable);
}
/* Stacks sampled:N: whether this allocation is the thread's Nth since the last sample (or takes
 * its bytes past N since then). Every allocation of the thread passes here exactly once, on the
 * fast path or the slow one. */
QA_CTX_FAST static inline bool qa_sample_due(struct qa_thread *t, size_t size)
{
    t->sample_left -= qa_cfg.sample_by_bytes ? (int64_t)size : 1;
    if (__builtin_expect(t->sample_left > 0, 1))
        return false;
    t->sample_left = qa_sample_interval(t); /* drawn afresh: the intervals are memoryless */
    return true;
}

/* Every look_left counted allocations the thread's next call looks at the writer thread and the
 * timeline (output/looks.c sets how many): one decrement and a branch on the fast path, and a
 * mark in the gate, not a call (a call here would make every malloc save registers). */
QA_CTX_FAST static inline void qa_look_countdown(struct qa_thread *t)
{
    if (__builtin_expect(--t->look_left == 0, 0))
        t->gate |= QA_GATE_LOOK;
}

/* The totals of a new block. They call nothing, so the fast path runs them without the
 * re-entrancy guard; it reads usable sizes from glibc's headers (gates are shut otherwise). */
QA_CTX_FAST static inline void qa_count_new_block(struct qa_thread *t, void *p, size_t size,
                                                  size_t usable, enum qa_call call)
{
    struct qa_counters *c = &t->c;
    t->last_alloc = (uintptr_t)p;
    c->by_call[call]++;
    c->bytes_requested += size;
    c->bytes_usable += usable;
    qa_size_hist_add(t, size);
    usable = qa_usable_hist_add(t, usable);
    qa_live_grew(t, usable);
    qa_look_countdown(t);
}

/* Whether a block about to be freed is temporary, heaptrack's way: it is the thread's last new
 * block and no free came between. Any free leaves last_alloc spent: the freed address plus
 * QA_LAST_ALLOC_SPENT, which no block has (blocks are at least 8-byte aligned) and which still
 * names a region the thread used for owned.c's fork. p + 1 rather than last | 1: one lea, not a
 * move and an or (churn: 283.9 instructions a pair with the or, against 280.8 before). */
QA_CTX_FAST static inline bool qa_temporary_spent(struct qa_thread *t, const void *p)
{
    bool temporary = t->last_alloc == (uintptr_t)p;
    t->last_alloc = (uintptr_t)p + QA_LAST_ALLOC_SPENT;
    return temporary;
}

/* The totals of a block about to be freed (the same guarantee as above); whether it was
 * temporary. */
QA_CTX_FAST static inline bool qa_count_freed_block(struct qa_thread *t, void *p, size_t usable)
{
    bool temporary = qa_temporary_spent(t, p);
    if (__builtin_expect(temporary, 0))
        t->c.temporary++;
    t->c.by_call[QA_FREE]++;
    qa_live_shrank(t, usable);
    return temporary;
}

/* In a forked child (owned.c), beside the counting above: its new block marked as its own, and
 * a freed block's mark taken back; a block without one was inherited. Kept out of the functions
 * above, which the fast path inlines: a call there would make every malloc and free save and
 * restore registers (11 instructions a pair, measured). */
QA_CTX_FAST static inline void qa_mark_own_block(void *p)
{
    if (qa_owned_tracking)
        qa_owned_mark(p);
}

QA_CTX_FAST static inline void qa_count_inherited_free(struct qa_thread *t, void *p, size_t usable)
{
    if (qa_owned_tracking && !qa_owned_take(p)) {
        t->c.inherited_freed++;
        t->c.inherited_freed_bytes += usable;
    }
}

#endif
