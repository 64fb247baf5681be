/* What a counted call records beyond the fast path's counts, inline in the entry points' slow
 * paths (entry/malloc.c, entry/shims.c): its stack and site, its queue attribution, poison, its
 * block record, a forked child's own-block mark, and the fault injector's verdict. Inline so that
 * stack capture starts one frame below the program's call (qa_capture, stacks.c).
 * Context: the slow path, under the re-entrancy guard (qa_enter): libunwind may allocate. */
#ifndef QAUDIT_RECORDING_H
#define QAUDIT_RECORDING_H

#include "counting.h"

/* The fault injector's verdict for a new allocation; captures the stack when it needs one. */
static inline bool qa_fail_now(struct qa_thread *t, size_t size, void **frames, int *depth)
{
    if (qa_cfg.fail_mode == QA_FAIL_NONE)
        return false;
    if (!qa_fault_should_fail(t, size, frames, depth))
        return false;
    t->c.failed++;
    return true;
}

static inline bool qa_wants_stack(struct qa_thread *t, size_t size, bool in_queue)
{
    switch (qa_cfg.stacks) {
    case QA_STACKS_ALWAYS:
    case QA_STACKS_FP:
        return true;
    case QA_STACKS_QUEUE:
        return in_queue || qa_patterns_active();
    case QA_STACKS_SAMPLED:
        return qa_sample_due(t, size);
    default:
        return false;
    }
}

/* What a counted block p needs beyond its totals: its stack and site when with_stack, its queue
 * attribution, poison, and its record for free(). frames/depth hold a stack already captured
 * (depth >= 0). Inlined into each entry point for the reason given at qa_capture. */
__attribute__((always_inline)) static inline void
qa_record_site_and_block(struct qa_thread *t, void *p, size_t size, enum qa_call call,
                         bool in_queue, bool with_stack, void **frames, int depth)
{
    uint32_t site = 0;
    if (with_stack) {
        if (depth < 0)
            depth = qa_capture(frames, qa_cfg.depth, qa_cfg.stacks == QA_STACKS_FP);
        bool keep =
            qa_cfg.stacks != QA_STACKS_QUEUE || in_queue || qa_frames_match_patterns(frames, depth);
        if (keep) {
            site = qa_site_of_stack(t, frames, depth);
            qa_site_alloc(t, site, size, in_queue);
        }
    }
    /* Only when it has something to count: a queue operation under way or patterns to match
     * (the call, made for every stack, cost 27 instructions a malloc in fp mode). */
    if (t->queue_op != NULL || (depth >= 0 && qa_patterns_active()))
        qa_queue_on_alloc(t, size, frames, depth);
    uint16_t flags = in_queue ? QA_BLOCK_QUEUE : 0;
    if (qa_cfg.poison == QA_POISON_ALL || (qa_cfg.poison == QA_POISON_QUEUE && in_queue)) {
        if (call != QA_CALLOC) {
            qa_poison_fill(p, size);
            flags |= QA_BLOCK_POISONED;
        }
    }
    /* Only blocks free() has something to do for: a site to credit or poison to count. */
    if (qa_blocks_enabled && (site != 0 || (flags & QA_BLOCK_POISONED))) {
        struct qa_block b = {(uintptr_t)p, size, site, flags, qa_fork_generation};
        qa_blocks_insert(&b);
    }
}

/* Counts a new block p of size bytes and records what else it needs. */
__attribute__((always_inline)) static inline void qa_record_alloc(struct qa_thread *t, void *p,
                                                                  size_t size, enum qa_call call,
                                                                  void **frames, int depth)
{
    qa_count_new_block(t, p, size, qa_usable_size(p), call);
    qa_mark_own_block(p);
    bool in_queue = qa_queue_in_op(t);
    bool with_stack = qa_wants_stack(t, size, in_queue);
    qa_record_site_and_block(t, p, size, call, in_queue, with_stack, frames, depth);
}

static inline void qa_record_free(struct qa_thread *t, void *p)
{
    size_t usable = qa_usable_size(p);
    qa_count_inherited_free(t, p, usable);
    bool temporary = qa_count_freed_block(t, p, usable);
    struct qa_block b;
    if (qa_blocks_enabled && qa_blocks_remove((uintptr_t)p, &b)) {
        if (b.generation != qa_fork_generation) { /* the parent's block: its poison too */
            qa_site_free_inherited(t, b.site, b.size);
            return;
        }
        uint64_t never = (b.flags & QA_BLOCK_POISONED) ? qa_poison_count(p, b.size) : 0;
        qa_site_free(t, b.site, b.size, never, temporary);
    }
}

#endif
