/* The entry points of the allocator shims (interpose/shims/): the table they call through
 * (extra_abi.h), exported under its reserved name, each call counted as the malloc-family call it
 * amounts to by the same records as malloc's (records/recording.h), and tallied per entry point
 * (records/shim_calls.c). Context: the program's calls to jemalloc's, tcmalloc's or mimalloc's own
 * entry points, any thread. */
#include <errno.h>

#include "../output/output.h"
#include "../records/recording.h"
#include "entry.h"

/* Other allocators' own entry points (mallocx, tc_malloc, mi_malloc...), reached from the
 * shims through the table below: counted as the malloc-family call `call` by the same record
 * functions. forward(args) is the allocator's own call. *seen: whether the call was counted (it is
 * only forwarded before initialisation and under the re-entrancy guard, as the malloc family is).
 */

/* A shim's block: its stack is taken here with room for one more frame, and the shim's frame
 * on top is left out (records/shim_calls.c knows the shims' code), so the site starts at the
 * program's call. */
__attribute__((always_inline)) static inline void record_extra(struct qa_thread *t, void *p,
                                                               size_t size, enum qa_call call)
{
    qa_count_new_block(t, p, size, qa_usable_size(p), call);
    qa_mark_own_block(p);
    bool in_queue = qa_queue_in_op(t);
    bool with_stack = qa_wants_stack(t, size, in_queue);
    void *frames[QA_MAX_DEPTH + 1];
    int depth = -1;
    if (with_stack) {
        depth = qa_capture(frames, qa_cfg.depth + 1, qa_cfg.stacks == QA_STACKS_FP);
        depth = qa_extra_strip(frames, depth, (int)qa_cfg.depth);
    }
    qa_record_site_and_block(t, p, size, call, in_queue, with_stack, frames, depth);
}

static void *counted_alloc(enum qa_call call, size_t size, bool may_fail, qa_forward_fn forward,
                           void *args, bool *seen)
{
    /* A program allocating through its allocator's own entry points (a jemalloc build of
     * redis) looks too, before the allocator holds any lock of its own. */
    struct qa_thread *self = qa_ready_now() ? qa_tls_thread() : NULL;
    if (self != NULL)
        qa_look_if_marked(self, __builtin_return_address(0));
    struct qa_thread *t = qa_ready_now() ? qa_enter() : NULL;
    *seen = t != NULL;
    if (t == NULL)
        return forward(args);
    void *frames[QA_MAX_DEPTH];
    int depth = -1;
    void *p = NULL;
    if (may_fail && qa_fail_now(t, size, frames, &depth))
        errno = ENOMEM;
    else if ((p = forward(args)) != NULL)
        record_extra(t, p, size, call);
    qa_leave(t);
    return p;
}

static void counted_free(void *p, qa_forward_fn forward, void *args, bool *seen)
{
    *seen = false;
    if (qa_in_bootstrap(p))
        return; /* the bootstrap arena's, never the allocator's */
    struct qa_thread *t = qa_ready_now() ? qa_enter() : NULL;
    if (t != NULL) {
        *seen = true;
        qa_record_free(t, p);
    }
    if (forward != NULL)
        forward(args);
    if (t != NULL)
        qa_leave(t);
}

static void *counted_resize(enum qa_call call, void *old, size_t size, bool zeroed,
                            qa_forward_fn forward, void *args, bool *seen)
{
    *seen = false;
    if (qa_in_bootstrap(old)) {
        errno = ENOMEM; /* the bootstrap arena's: the allocator cannot resize it */
        return NULL;
    }
    struct qa_thread *t = qa_ready_now() ? qa_enter() : NULL;
    if (t == NULL)
        return forward(args);
    *seen = true;
    void *p = qa_counted_resize(t, old, size, call, zeroed, forward, args);
    qa_leave(t);
    return p;
}

static enum qa_call call_of(enum qaudit_as as)
{
    static const enum qa_call calls[] = {[QAUDIT_AS_MALLOC] = QA_MALLOC,
                                         [QAUDIT_AS_CALLOC] = QA_CALLOC,
                                         [QAUDIT_AS_POSIX_MEMALIGN] = QA_POSIX_MEMALIGN,
                                         [QAUDIT_AS_ALIGNED_ALLOC] = QA_ALIGNED_ALLOC,
                                         [QAUDIT_AS_MEMALIGN] = QA_MEMALIGN,
                                         [QAUDIT_AS_VALLOC] = QA_VALLOC,
                                         [QAUDIT_AS_PVALLOC] = QA_PVALLOC,
                                         [QAUDIT_AS_REALLOC] = QA_REALLOC,
                                         [QAUDIT_AS_REALLOCARRAY] = QA_REALLOCARRAY};
    return (unsigned)as < sizeof calls / sizeof calls[0] ? calls[as] : QA_MALLOC;
}

static void *table_alloc(unsigned family, unsigned entry, enum qaudit_as as, size_t size,
                         bool may_fail, qaudit_forward_fn forward, void *args)
{
    bool seen;
    void *p = counted_alloc(call_of(as), size, may_fail, forward, args, &seen);
    if (seen)
        qa_shim_tally(family, entry);
    return p;
}

static void table_free(unsigned family, unsigned entry, void *p, qaudit_forward_fn forward,
                       void *args)
{
    bool seen;
    counted_free(p, forward, args, &seen);
    if (seen)
        qa_shim_tally(family, entry);
}

static void *table_resize(unsigned family, unsigned entry, enum qaudit_as as, void *old,
                          size_t size, bool zeroed, qaudit_forward_fn forward, void *args)
{
    bool seen;
    void *p = counted_resize(call_of(as), old, size, zeroed, forward, args, &seen);
    if (seen)
        qa_shim_tally(family, entry);
    return p;
}

static void table_note(unsigned family, unsigned entry)
{
    if (qa_is_ready())
        qa_shim_tally(family, entry);
}

/* The one symbol the shims look for (a weak reference of theirs): a reserved name no program
 * defines, so exporting it tells the program nothing. */
QA_EXPORT const struct qaudit_extra_v1 QAUDIT_EXTRA_TABLE = {
    .version = QAUDIT_EXTRA_VERSION,
    .size = sizeof(struct qaudit_extra_v1),
    .alloc = table_alloc,
    .free = table_free,
    .resize = table_resize,
    .note = table_note,
};
