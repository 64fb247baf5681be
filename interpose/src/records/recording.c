/* The out-of-line parts of recording: a sampled malloc met on the fast path, and a resize of a
 * live block (realloc, or another allocator's own resize); and what the records keep in a
 * thread record for a new record and each new owner (base/threads.c calls them).
 * Context: the slow path, under the re-entrancy guard. */
#include <errno.h>

#include "recording.h"

/* A sampled malloc met on the fast path, already counted: its stack, site and block record, under
 * the guard (libunwind may allocate). Out of line, as one allocation in N comes here; its own
 * frame and malloc's are the interposer's and are skipped in the stack. */
__attribute__((noinline)) void qa_record_sampled(struct qa_thread *t, void *p, size_t size)
{
    qa_assert(!(t->gate & QA_GATE_BUSY)); /* from a fast path: the guard is clear there */
    qa_guard(t);
    void *frames[QA_MAX_DEPTH];
    int depth = qa_capture_by_cfi(frames, qa_cfg.depth); /* called by malloc, which keeps no frame */
    qa_record_site_and_block(t, p, size, QA_MALLOC, false, true, frames, depth);
    qa_guard_restore(t, false);
}

/* Stacks sampled: a resize is an allocation of its new size to the sampler like any other, drawn
 * whether or not the old block was sampled (so the figures stay unbiased), and attributed to the
 * resize's own stack. kept: the old block's record, already taken from its site, or NULL. */
static void resample_resized(struct qa_thread *t, void *p, size_t size, struct qa_block *kept,
                             void **frames, int depth)
{
    uint16_t flags = kept ? kept->flags : 0;
    if (!qa_sample_due(t, size)) {
        if (flags & QA_BLOCK_POISONED) /* poison still counts at its free */
            qa_blocks_insert(&(struct qa_block){(uintptr_t)p, size, 0, flags, qa_fork_generation});
        return;
    }
    if (depth < 0)
        depth = qa_capture(frames, qa_cfg.depth, false);
    uint32_t site = qa_site_of_stack(t, frames, depth);
    qa_site_alloc(t, site, size, false);
    if (qa_blocks_enabled)
        qa_blocks_insert(&(struct qa_block){(uintptr_t)p, size, site, flags, qa_fork_generation});
}

/* A resize of a live block, done by forward(args) (realloc, or another allocator's own entry
 * point): counted as one realloc (in place or moved), the old block's record replaced by the new
 * one. zeroed: the bytes past the old size are zero, so poison must leave them. */
void *qa_counted_resize(struct qa_thread *t, void *old, size_t size, enum qa_call call, bool zeroed,
                        qa_forward_fn forward, void *args)
{
    void *frames[QA_MAX_DEPTH];
    int depth = -1;
    if (qa_fail_now(t, size, frames, &depth)) {
        errno = ENOMEM;
        return NULL;
    }
    size_t old_usable = qa_usable_size(old);
    /* Taken before the old block can be released: its address may be another thread's next. */
    bool old_inherited = qa_owned_tracking && !qa_owned_take(old);
    struct qa_block before = {0};
    bool known = qa_blocks_enabled && qa_blocks_remove((uintptr_t)old, &before);
    void *p = forward(args);
    if (p == NULL) {
        if (known)
            qa_blocks_insert(&before);
        if (qa_owned_tracking && !old_inherited)
            qa_owned_mark(old);
        return NULL;
    }
    struct qa_counters *c = &t->c;
    /* A resize frees the old block and allocates the new one, as heaptrack records it: the old
     * block right after its own allocation was temporary. */
    bool temporary = qa_temporary_spent(t, old);
    c->temporary += temporary;
    c->reallocs++;
    c->by_call[call]++;
    c->bytes_requested += size;
    if (p == old)
        c->realloc_in_place++;
    else
        c->realloc_moved++;
    size_t usable = qa_usable_size(p);
    c->bytes_usable += usable;
    if (old_inherited) { /* the new block is the child's own: see qa_counters_own_frees */
        c->inherited_reallocated++;
        c->inherited_freed_bytes += old_usable;
    }
    if (qa_owned_tracking)
        qa_owned_mark(p);
    qa_size_hist_add(t, size);
    qa_usable_hist_add(t, usable);
    qa_live_moved(t, (int64_t)usable - (int64_t)old_usable);
    qa_look_countdown(t);
    t->last_alloc = (uintptr_t)p; /* the thread's newest block, as after a malloc */
    if (known) {
        if (before.generation != qa_fork_generation)
            qa_site_free_inherited(t, before.site, before.size);
        else
            qa_site_free(t, before.site, before.size, 0, temporary);
        before.generation = qa_fork_generation;
        before.ptr = (uintptr_t)p;
        if ((before.flags & QA_BLOCK_POISONED) && size > before.size && !zeroed)
            qa_poison_fill((char *)p + before.size, size - before.size);
        before.size = size;
    }
    if (qa_cfg.stacks == QA_STACKS_SAMPLED)
        resample_resized(t, p, size, known ? &before : NULL, frames, depth);
    else if (known) {
        qa_site_alloc(t, before.site, size, false);
        qa_blocks_insert(&before);
    }
    return p;
}

/* A record's first mapping: the fault injector's and the sampler's streams (order: how many
 * records were mapped before it). */
void qa_records_new_record(struct qa_thread *t, uint64_t order)
{
    t->c.rng = 0x9e3779b97f4a7c15ull * (order + 1);
    qa_sample_seed(t, order);
}

/* A new owner of a record: the state of the previous owner's calls does not carry over; a
 * forked child's threads mark their blocks (owned.c) and leave the parent's fast path. */
void qa_records_new_owner(struct qa_thread *t)
{
    if (qa_owned_tracking)
        t->gate |= QA_GATE_FORKED;
    qa_queue_new_owner(t);
    qa_live_new_owner(t);
    qa_stacks_new_owner(t);
}
