/* Call stacks: return addresses of the caller's stack, by libunwind, by libgcc's unwinder or by a
 * frame-pointer walk, the interposer's own frames left out; and the loader calls (the stack walk,
 * dlopen, dlclose) that fork must not split. Context: the slow path under the re-entrancy guard
 * (libunwind may allocate); qa_unwinds_block/unblock in the fork handlers. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <unwind.h> /* libgcc's, linked in statically: interpose/CMakeLists.txt */
#include <sched.h>
#include <string.h>

#include "records.h"

atomic_uint_fast64_t qa_stacks_truncated;

/* The calling thread's stack, for a frame-pointer walk that never leaves it; found on the
 * thread's first walk (a fork's child keeps its thread's stack, and so these). */
static __thread uintptr_t stack_lo, stack_hi;

static void find_stack_bounds(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        stack_lo = (uintptr_t)addr;
        stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

/* Which unwinder a thread uses. libunwind's cached walk (unw_backtrace) is the fastest, about 1,600
 * instructions for 16 frames once warm, but each thread that uses it maps a 256 KiB frame cache and
 * writes all of it (64 page faults), held until the thread exits: 500 threads in a pool cost 128
 * MiB more resident memory, and 20,000 short threads took 13-20 times the native CPU time.
 * libgcc's unwinder (_Unwind_Backtrace, whose frame lookup is glibc's lock-free _dl_find_object)
 * keeps nothing per thread and makes no system call, at about 27,500 instructions for the same
 * stack. So a thread takes its first FIRST_STACKS_BY_LIBGCC stacks with libgcc, and only then one
 * of the FAST_UNWINDERS slots, if one is free: short threads never pay for a cache, and the caches
 * hold at most 16 MiB. A slot is given back when the record's next owner takes it (the cache itself
 * is freed by libunwind as its thread exits). */
enum { FIRST_STACKS_BY_LIBGCC = 64, FAST_UNWINDERS = 64 };
/* A thread's first stacks never go to the cached rules (walk_by_rules says why). */
enum { FIRST_STACKS_BEFORE_RULES = 8 };
static atomic_uint fast_unwinders QA_FORK_STATE;

static bool claim_fast_unwinder(void)
{
    unsigned n = atomic_load_explicit(&fast_unwinders, memory_order_relaxed);
    while (n < FAST_UNWINDERS)
        if (atomic_compare_exchange_weak(&fast_unwinders, &n, n + 1))
            return true;
    return false;
}

static bool use_libunwind(struct qa_thread *t)
{
    if (t == NULL)
        return false;
    if (t->fast_unwinder)
        return true;
    if (t->libgcc_stacks < FIRST_STACKS_BY_LIBGCC) {
        t->libgcc_stacks++;
        return false;
    }
    return t->fast_unwinder = claim_fast_unwinder();
}

void qa_stacks_new_owner(struct qa_thread *t)
{
    if (t->fast_unwinder)
        atomic_fetch_sub(&fast_unwinders, 1);
    t->fast_unwinder = false;
    t->libgcc_stacks = 0;
}

/* In a forked child only the forking thread is left: every slot is free again. Only the records
 * that hold one are written (each write copies a page in the child). */
void qa_stacks_after_fork_child(void)
{
    if (atomic_load(&fast_unwinders) == 0)
        return;
    for (struct qa_thread *t = qa_threads_head(); t != NULL; t = t->next)
        if (t->fast_unwinder)
            t->fast_unwinder = false;
    atomic_store(&fast_unwinders, 0);
}

struct gcc_walk {
    void **frames;
    int depth, max;
};

static _Unwind_Reason_Code gcc_frame(struct _Unwind_Context *context, void *arg)
{
    struct gcc_walk *w = arg;
    uintptr_t ip = _Unwind_GetIP(context);
    /* 0: the outermost frame's return address, which CFI marks undefined; libunwind stops
     * before it, and so must this walk for the two to give the same stack. */
    if (w->depth == w->max || ip == 0)
        return _URC_END_OF_STACK;
    w->frames[w->depth++] = (void *)ip;
    return _URC_NO_REASON;
}

static int walk_libgcc(void **frames, int max)
{
    struct gcc_walk w = {frames, 0, max};
    _Unwind_Backtrace(gcc_frame, &w);
    return w.depth;
}

/* Frames of the interposer itself come first and are not kept, so the walk writes the
 * program's frames straight into place. */
static __attribute__((always_inline)) inline int walk_frame_pointers(void **frames, unsigned max,
                                                                     bool *truncated)
{
    if (stack_hi == 0)
        find_stack_bounds();
    /* In registers: the stores to frames[] could otherwise alias them, and GCC reloaded both
     * thread-locals for every frame. */
    uintptr_t lo = stack_lo, hi = stack_hi;
    void **fp = __builtin_frame_address(0);
    int n = 0;
    for (;;) {
        uintptr_t at = (uintptr_t)fp;
        if (at < lo || at + 16 > hi || (at & 7))
            break;
        void *ret = fp[1];
        if (ret == NULL)
            break;
        if (n > 0 || !qa_ours(ret)) {
            if ((unsigned)n == max) {
                *truncated = true;
                break;
            }
            frames[n++] = ret;
        }
        void **next = fp[0];
        if (next <= fp)
            break;
        fp = next;
    }
    return n;
}

/* glibc's fork does not reset the loader's module-list lock in the child, so a thread holding it
 * at the fork (inside dl_iterate_phdr, which libunwind calls for every stack, or inside dlopen or
 * dlclose) leaves the child deadlocked on its first stack. Natively a program seldom walks the
 * module list; with stacks on, every allocation does. So a thread counts, in its record, the
 * loader calls it is inside (qa_loader_enter/leave), and fork (qa_unwinds_block) raises a flag,
 * waits for every other thread's count to drop to zero and keeps new outermost calls out until
 * the fork is done. Sequentially consistent stores and loads on both sides: each side sees the
 * other's, so no call starts unseen. A nested call (a stack inside dlopen) goes on: its thread is
 * already counted, and fork is waiting for it. */
static atomic_bool fork_pending QA_FORK_STATE;

void qa_loader_enter(struct qa_thread *t)
{
    if (atomic_load_explicit(&t->unwinding, memory_order_relaxed) > 0) {
        atomic_fetch_add(&t->unwinding, 1);
        return;
    }
    for (;;) {
        atomic_store(&t->unwinding, 1);
        if (!atomic_load(&fork_pending))
            return;
        atomic_store(&t->unwinding, 0);
        while (atomic_load(&fork_pending))
            sched_yield();
    }
}

void qa_loader_leave(struct qa_thread *t)
{
    atomic_fetch_sub_explicit(&t->unwinding, 1, memory_order_release);
}

void qa_unwinds_block(void)
{
    atomic_store(&fork_pending, true);
    struct qa_thread *self = qa_self_if_registered();
    for (struct qa_thread *t = qa_threads_head(); t != NULL; t = t->next)
        while (t != self && atomic_load(&t->unwinding) > 0)
            sched_yield();
}

void qa_unwinds_unblock(void)
{
    atomic_store(&fork_pending, false);
}

/* The stack as the libraries walk it (libgcc's unwinder for a thread's first stacks, then
 * libunwind's), the interposer's own frames removed. */
static int walk_by_library(void **frames, unsigned max, struct qa_thread *t)
{
    void *raw[QA_MAX_DEPTH + 8];
    unsigned want = max + 8 < QA_MAX_DEPTH + 8 ? max + 8 : QA_MAX_DEPTH + 8;
    if (t != NULL)
        qa_loader_enter(t);
    int n = use_libunwind(t) ? unw_backtrace(raw, (int)want) : walk_libgcc(raw, (int)want);
    if (t != NULL)
        qa_loader_leave(t);
    int skip = 0;
    while (skip < n && qa_ours(raw[skip]))
        skip++;
    int depth = n - skip;
    if (depth > (int)max) {
        depth = (int)max;
        atomic_fetch_add_explicit(&qa_stacks_truncated, 1, memory_order_relaxed);
    }
    if (depth < 0)
        depth = 0;
    memcpy(frames, raw + skip, (size_t)depth * sizeof *frames);
    return depth;
}

atomic_uint_fast64_t qa_unwind_compared, qa_unwind_differed, qa_unwind_by_library;

/* QAUDIT_UNWIND_CHECK: the rules' walk (depth frames in frames) against the libraries', whose
 * stack is the one kept; the first few differences said on stderr. */
static int check_rules_walk(void **frames, unsigned max, int depth, struct qa_thread *t)
{
    void *mine[QA_MAX_DEPTH + 1];
    memcpy(mine, frames, (size_t)depth * sizeof *frames);
    int theirs = walk_by_library(frames, max, t);
    atomic_fetch_add(&qa_unwind_compared, 1);
    int same = 0;
    while (same < depth && same < theirs && mine[same] == frames[same])
        same++;
    if (same == depth && depth == theirs)
        return theirs;
    if (atomic_fetch_add(&qa_unwind_differed, 1) < 5)
        qa_log("unwind check: %d frames by the rules, %d by the libraries, frame %d: %p, %p", depth,
               theirs, same, same < depth ? mine[same] : NULL, same < theirs ? frames[same] : NULL);
    return theirs;
}

/* The stack by the cached rules (unwind_rules.c); by the libraries when a frame's rule is not
 * known, and both ways under QAUDIT_UNWIND_CHECK. Out of line: the entry points inline only the
 * frame-pointer walk (with this file grown, GCC stopped inlining that walk, +40 instructions a
 * pair in `fp`, hence its always_inline). */
static __attribute__((noinline)) int walk_by_rules(void **frames, unsigned max)
{
    struct qa_thread *t = qa_self_if_registered();
    if (stack_hi == 0) {
        /* A thread's first stacks by the libraries (libgcc's, as before the rules). The walk's
         * bounds come from pthread_getattr_np, which holds the thread's lock while it allocates
         * (for the main thread's /proc/self/maps, for any thread's cpuset): asked from inside a
         * malloc it made, it waits on that lock for ever (Rust's runtime asks it for the stack at
         * start-up, at its first malloc: e2e_rust hung). Asked after a thread's first few stacks, past
         * a runtime's start. */
        if (t == NULL || t->libgcc_stacks < FIRST_STACKS_BEFORE_RULES)
            return walk_by_library(frames, max, t);
        find_stack_bounds();
    }
    bool truncated = false;
    int depth = qa_rules_walk(frames, max, stack_lo, stack_hi, t, &truncated);
    if (depth >= 0 && qa_cfg.unwind_check)
        return check_rules_walk(frames, max, depth, t);
    if (depth >= 0) {
        if (truncated)
            atomic_fetch_add_explicit(&qa_stacks_truncated, 1, memory_order_relaxed);
        return depth;
    }
    if (qa_cfg.unwind_check)
        atomic_fetch_add(&qa_unwind_by_library, 1);
    return walk_by_library(frames, max, t);
}

/* A stack taken under a function of ours that keeps no frame pointer (malloc's fast path calls
 * qa_record_sampled; entry/malloc.c): the libraries read every frame's CFI, ours too, where the
 * rules' walk finds the program's frame by our frame pointers and would lose its innermost one. */
int qa_capture_by_cfi(void **frames, unsigned max)
{
    return walk_by_library(frames, max, qa_self_if_registered());
}

/* Return addresses of the caller's stack, the interposer's own frames removed. Inlined (across
 * files, by the link-time optimiser) into the entry points that capture, so that the walk starts
 * one frame below the program's call instead of walking three frames of our own first. */
__attribute__((always_inline)) inline int qa_capture(void **frames, unsigned max,
                                                     bool frame_pointers)
{
    if (frame_pointers) {
        bool truncated = false;
        int depth = walk_frame_pointers(frames, max, &truncated);
        if (truncated)
            atomic_fetch_add_explicit(&qa_stacks_truncated, 1, memory_order_relaxed);
        return depth;
    }
    return walk_by_rules(frames, max);
}
