/* libqaudit-preload.so's malloc family: each exported entry point checks readiness and picks the
 * fast path (count and forward, records/counting.h) or the slow one (records/recording.h), and
 * forwards to the next allocator (base/real.c); nothing else lives here. Safe before
 * initialisation (the bootstrap arena serves dlsym's own allocations), re-entrant (the guard
 * forwards whatever the interposer or libunwind allocate), no global lock on the hot path.
 * Context: the program's threads, any moment, signal handlers included (a handler that
 * allocates meets the guard or the fast path like any other call).
 * The fast path (malloc and free, their first lines) reads the thread's record (qa_tls_record),
 * its gate, and the counting's fields (records/counting.h); every other case goes out of line. */
#include <errno.h>
#include <string.h>

#include "../output/output.h"
#include "../records/recording.h"
#include "entry.h"

/* The thread, when this call may take the fast path. A thread is registered only once the
 * interposer is ready, so a registered thread needs no readiness check; an unregistered one's
 * TLS names qa_unregistered, whose gate is shut, so one test covers both. */
static inline struct qa_thread *fast_thread(void)
{
    struct qa_thread *t = qa_tls_record;
    if (__builtin_expect(t->gate != 0, 0))
        return NULL;
    return t;
}

/* A forked child's fast path: the parent's, with its blocks marked (the gate is
 * QA_GATE_FORKED alone). Out of line, so that the parent's fast path carries none of it. */
__attribute__((noinline)) static void *malloc_forked(struct qa_thread *t, size_t size)
{
    qa_assert(t->gate == QA_GATE_FORKED && qa_owned_tracking);
    void *p = qa_real.malloc_fn(size);
    if (p != NULL) {
        qa_count_new_block(t, p, size, qa_glibc_chunk_usable(p), QA_MALLOC);
        qa_owned_mark(p);
        if (qa_cfg.stacks == QA_STACKS_SAMPLED && qa_sample_due(t, size))
            qa_record_sampled(t, p, size);
    }
    return p;
}

/* A forked child's free on its fast path (a look may be due: it waits for the next allocation). */
__attribute__((noinline)) static void free_forked(struct qa_thread *t, void *p)
{
    qa_assert((t->gate & ~(unsigned)QA_GATE_LOOK) == QA_GATE_FORKED && qa_owned_tracking);
    size_t usable = qa_glibc_chunk_usable(p);
    qa_count_inherited_free(t, p, usable);
    qa_count_freed_block(t, p, usable);
    qa_real.free_fn(p);
}

/* A thread's look (output/looks.c), at its first call (it has no record yet) or at a call its
 * countdown marked. */
static inline void look_if_due(struct qa_thread *t, const void *caller)
{
    if (t == NULL) {
        if (qa_writer_due_now((uintptr_t)caller))
            qa_writer_start_lazy();
    } else {
        qa_look_if_marked(t, caller);
    }
}

/* The other allocation calls look too (a server may allocate mostly with posix_memalign or
 * calloc); a thread's first call among them registers it and looks at its next. */
static inline void look_if_registered(const void *caller)
{
    struct qa_thread *self = qa_tls_thread();
    if (self != NULL)
        look_if_due(self, caller);
}

/* Everything but the fast path, out of line so that the fast path's frame stays small. */
__attribute__((noinline)) static void *malloc_slow(size_t size, const void *caller)
{
    if (!qa_ready_now())
        return qa_bootstrap_alloc(size, 16);
    struct qa_thread *self = qa_tls_thread();
    look_if_due(self, caller);
    if (self != NULL && self->gate == QA_GATE_FORKED)
        return malloc_forked(self, size);
    struct qa_thread *t = qa_enter();
    if (t == NULL)
        return qa_real.malloc_fn(size);
    void *frames[QA_MAX_DEPTH];
    int depth = -1;
    void *p = NULL;
    if (qa_fail_now(t, size, frames, &depth))
        errno = ENOMEM;
    else if ((p = qa_real.malloc_fn(size)) != NULL)
        qa_record_alloc(t, p, size, QA_MALLOC, frames, depth);
    qa_leave(t);
    return p;
}

/* The bodies of malloc, free and realloc, which realloc and reallocarray call too; each exported
 * under its name by an alias (types.h, QA_EXPORT_AS), so that those calls never go through an
 * exported symbol. Same code: the alias is the body's own address. */
void *qa_malloc_entry(size_t size);
void qa_free_entry(void *p);
void *qa_realloc_entry(void *old, size_t size);
/* Not inlined into realloc: a call from there stays a call, whose return address (the caller a
 * thread's look is judged by) is realloc's, as it was when realloc called malloc by name. */
#define ENTRY_BODY __attribute__((noinline))
/* malloc and free keep no frame pointer of their own (push, move and pop: 6 instructions a
 * malloc/free pair): every path of theirs that takes a stack jumps to its slow path rather than
 * calling it (malloc_slow, free_slow: their frame is then the program's callee), and the one
 * call that takes a stack from inside, sampled's qa_record_sampled, walks with libunwind or
 * libgcc (qa_capture_by_cfi), which read the CFI, never with frame pointers nor the cached rules'
 * walk, which finds the program's frame by ours (fp mode never takes the fast path).
 * realloc keeps its frame: qa_counted_resize is called, and may walk frame pointers. */
#define FAST_ENTRY_BODY __attribute__((noinline, optimize("omit-frame-pointer")))

/* A new block on the fast path, counted: out of line for an mmap'd chunk (the header's bit, which
 * the fast path tests instead of computing the usable size of either kind). */
static inline void *malloc_counted(struct qa_thread *t, void *p, size_t size, size_t usable)
{
    qa_count_new_block(t, p, size, usable, QA_MALLOC);
    if (qa_cfg.stacks == QA_STACKS_SAMPLED && qa_sample_due(t, size))
        qa_record_sampled(t, p, size);
    return p;
}

__attribute__((noinline, cold)) static void *malloc_mmapped(struct qa_thread *t, void *p,
                                                            size_t size)
{
    return malloc_counted(t, p, size, qa_glibc_chunk_usable(p));
}

FAST_ENTRY_BODY void *qa_malloc_entry(size_t size)
{
    struct qa_thread *t = fast_thread();
    if (t == NULL)
        return malloc_slow(size, __builtin_return_address(0));
    void *p = qa_real.malloc_fn(size);
    if (p == NULL)
        return p;
    size_t header = qa_chunk_header(p);
    if (__builtin_expect(header & QA_CHUNK_MMAPPED, 0))
        return malloc_mmapped(t, p, size);
    return malloc_counted(t, p, size, qa_heap_chunk_usable(header));
}
extern void *malloc(size_t size) QA_EXPORT_AS(qa_malloc_entry);

__attribute__((noinline)) static void free_slow(void *p)
{
    if (qa_in_bootstrap(p))
        return;
    if (!qa_ready_now())
        return; /* cannot happen with a real block: it came from the allocator we resolve */
    struct qa_thread *forked = qa_tls_thread();
    bool only_forked = forked != NULL && (forked->gate & ~(unsigned)QA_GATE_LOOK) == QA_GATE_FORKED;
    if (only_forked && !qa_blocks_may_hold((uintptr_t)p)) {
        free_forked(forked, p);
        return;
    }
    struct qa_thread *t = qa_enter();
    if (t == NULL) {
        qa_real.free_fn(p);
        return;
    }
    qa_record_free(t, p);
    qa_real.free_fn(p);
    qa_leave(t);
}

FAST_ENTRY_BODY void qa_free_entry(void *p)
{
    if (p == NULL)
        return;
    struct qa_thread *t = fast_thread();
    if (t == NULL) {
        free_slow(p);
        return;
    }
    /* One read of the header: an mmap'd chunk, or a block of the bootstrap arena (whose size
     * word carries the same bit), goes to the slow path, which tells them apart. */
    size_t header = qa_chunk_header(p);
    if ((header & QA_CHUNK_MMAPPED) || qa_blocks_may_hold((uintptr_t)p)) {
        free_slow(p);
        return;
    }
    qa_count_freed_block(t, p, qa_heap_chunk_usable(header));
    qa_real.free_fn(p);
}
extern void free(void *p) QA_EXPORT_AS(qa_free_entry);

QA_EXPORT void *calloc(size_t n, size_t size)
{
    if (!qa_ready_now()) {
        size_t bytes;
        if (__builtin_mul_overflow(n, size, &bytes))
            return NULL;
        return qa_bootstrap_alloc(bytes, 16); /* static storage: already zero */
    }
    look_if_registered(__builtin_return_address(0));
    struct qa_thread *t = qa_enter();
    if (t == NULL)
        return qa_real.calloc_fn(n, size);
    size_t bytes = 0;
    bool overflow = __builtin_mul_overflow(n, size, &bytes);
    void *frames[QA_MAX_DEPTH];
    int depth = -1;
    void *p = NULL;
    if (!overflow && qa_fail_now(t, bytes, frames, &depth))
        errno = ENOMEM;
    else if ((p = qa_real.calloc_fn(n, size)) != NULL)
        qa_record_alloc(t, p, bytes, QA_CALLOC, frames, depth);
    qa_leave(t);
    return p;
}

struct realloc_args {
    void *old;
    size_t size;
};

static void *forward_realloc(void *args)
{
    struct realloc_args *a = args;
    return qa_real.realloc_fn(a->old, a->size);
}

/* realloc of a live block. realloc(NULL, n) is an allocation, realloc(p, 0) a free. */
static void *counted_realloc(struct qa_thread *t, void *old, size_t size, enum qa_call call)
{
    struct realloc_args args = {old, size};
    return qa_counted_resize(t, old, size, call, false, forward_realloc, &args);
}

ENTRY_BODY void *qa_realloc_entry(void *old, size_t size)
{
    if (old != NULL && qa_in_bootstrap(old)) {
        void *p = qa_malloc_entry(size);
        if (p != NULL) {
            size_t keep = qa_bootstrap_size(old);
            memcpy(p, old, keep < size ? keep : size);
        }
        return p;
    }
    if (old == NULL)
        return qa_malloc_entry(size);
    if (!qa_ready_now())
        return NULL;
    if (size == 0) {
        qa_free_entry(old);
        return NULL;
    }
    look_if_registered(__builtin_return_address(0));
    struct qa_thread *t = qa_enter();
    if (t == NULL)
        return qa_real.realloc_fn(old, size);
    void *p = counted_realloc(t, old, size, QA_REALLOC);
    qa_leave(t);
    return p;
}
extern void *realloc(void *old, size_t size) QA_EXPORT_AS(qa_realloc_entry);

QA_EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    if (old == NULL || size == 0 || n == 0 || qa_in_bootstrap(old) || !qa_ready_now())
        return qa_realloc_entry(old, bytes);
    look_if_registered(__builtin_return_address(0));
    struct qa_thread *t = qa_enter();
    if (t == NULL)
        return qa_real.realloc_fn(old, bytes);
    void *p = counted_realloc(t, old, bytes, QA_REALLOCARRAY);
    qa_leave(t);
    return p;
}

static void *real_aligned(enum qa_call call, size_t align, size_t size, int *error)
{
    void *p = NULL;
    switch (call) {
    case QA_POSIX_MEMALIGN:
        *error = qa_real.posix_memalign_fn(&p, align, size);
        return *error ? NULL : p;
    case QA_ALIGNED_ALLOC:
        return qa_real.aligned_alloc_fn(align, size);
    case QA_MEMALIGN:
        return qa_real.memalign_fn(align, size);
    case QA_VALLOC:
        return qa_real.valloc_fn(size);
    default:
        return qa_real.pvalloc_fn(size);
    }
}

/* The aligned family shares one path; glibc's own checks (alignment a power of two, etc.) stay
 * with glibc: the interposer forwards and counts what succeeds. */
static void *aligned(enum qa_call call, size_t align, size_t size, int *error, const void *caller)
{
    if (!qa_ready_now())
        return qa_bootstrap_alloc(size, align < 4096 ? align : 4096);
    look_if_registered(caller);
    struct qa_thread *t = qa_enter();
    if (t == NULL)
        return real_aligned(call, align, size, error);
    void *frames[QA_MAX_DEPTH];
    int depth = -1;
    void *p = NULL;
    if (qa_fail_now(t, size, frames, &depth))
        *error = ENOMEM;
    else if ((p = real_aligned(call, align, size, error)) != NULL)
        qa_record_alloc(t, p, size, call, frames, depth);
    qa_leave(t);
    return p;
}

QA_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    int error = 0;
    void *p = aligned(QA_POSIX_MEMALIGN, align, size, &error, __builtin_return_address(0));
    if (p != NULL)
        *out = p;
    return p != NULL ? 0 : (error ? error : ENOMEM);
}

QA_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    int error = 0;
    void *p = aligned(QA_ALIGNED_ALLOC, align, size, &error, __builtin_return_address(0));
    if (p == NULL && error)
        errno = error;
    return p;
}

QA_EXPORT void *memalign(size_t align, size_t size)
{
    int error = 0;
    return aligned(QA_MEMALIGN, align, size, &error, __builtin_return_address(0));
}

QA_EXPORT void *valloc(size_t size)
{
    int error = 0;
    return aligned(QA_VALLOC, 4096, size, &error, __builtin_return_address(0));
}

QA_EXPORT void *pvalloc(size_t size)
{
    int error = 0;
    return aligned(QA_PVALLOC, 4096, size, &error, __builtin_return_address(0));
}

QA_EXPORT size_t malloc_usable_size(void *p)
{
    if (p == NULL)
        return 0;
    if (qa_in_bootstrap(p))
        return qa_bootstrap_size(p);
    return qa_ready_now() ? qa_real.usable_size_fn(p) : 0;
}
