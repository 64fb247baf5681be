/* The data the base layer's inline functions read on every call: how far start-up has come, the
 * settings' verdict on the fast path, the calling thread's record, the bootstrap arena, the next
 * allocator and how usable sizes are read. Defined in globals.c, which needs nothing else, so
 * that no file these functions are used in is also one they depend on.
 * Context: read in every context, the fast path first; written at start-up (and the
 * thread record at a thread's first counted call), never on the fast path. */
#ifndef QAUDIT_GLOBALS_H
#define QAUDIT_GLOBALS_H

#include "../types.h"

/* What the fork handlers write, and the small counters a forked child's exit dump reads,
 * gathered into one section on as few pages as possible: after a fork every page written is a
 * copy-on-write fault, in the parent and in each child (and a page the parent never touched is
 * a fault at the child's first read), so such state must not be scattered over the
 * interposer's half megabyte of data (docs/design.md, "Forks cost little"). */
#define QA_FORK_STATE __attribute__((section("qa_fork_state")))
/* A fork handler's reset of an atomic object: written only when it holds something else, so the
 * pages of tables the parent never filled are not copied. */
#define QA_RESET(obj, v)                                                                           \
    do {                                                                                           \
        if (atomic_load_explicit(&(obj), memory_order_relaxed) != (v))                             \
            atomic_store(&(obj), (v));                                                             \
    } while (0)

/* ---- start-up (lifecycle.c sets them) ---- */
enum qa_readiness {
    QA_NOT_STARTED = 0, /* nothing resolved yet: allocations come from the bootstrap arena */
    QA_STARTING = 1,    /* initialise() is running (or failed): the bootstrap arena still */
    QA_READY = 2        /* the next allocator and every part are set up: counting */
};
extern atomic_int qa_ready;
static inline bool qa_is_ready(void)
{
    return atomic_load_explicit(&qa_ready, memory_order_acquire) == QA_READY;
}
/* qaudit detach restored every entry point: the interposer counts and writes nothing more (its
 * fork handlers and exit dump stay registered and do nothing) until a later attach. */
extern bool qa_inert;
/* True when no setting needs more than counting and sampling (stacks off, sampled, or only
 * inside queue operations; no site patterns, poison or fault injection) and block sizes come
 * from chunk headers. Threads start with QA_GATE_FULL otherwise. Set before any thread
 * registers. */
extern bool qa_fast_path;
/* The image's writer thread has not started yet: it starts lazily (output/writer.c sets and
 * clears it; records/stats.c reads it as live bytes move). */
extern _Atomic bool qa_writer_waiting;

/* ---- the calling thread's record (threads.c maps and reuses it); found through
 * initial-exec TLS, so reading it never allocates ---- */
/* Never NULL: until the thread registers it names qa_unregistered, a record whose gate is shut
 * (QA_GATE_UNREGISTERED), so that the fast path tests the gate alone (mimalloc's empty heap;
 * one test and branch less a call, bench/RESULTS.md). Only the fast path reads it directly. */
extern __thread struct qa_thread *qa_tls_record __attribute__((tls_model("initial-exec")));
extern struct qa_thread qa_unregistered;
/* The calling thread's record, NULL until it registers: how everything but the fast path reads
 * it. */
static inline struct qa_thread *qa_tls_thread(void)
{
    struct qa_thread *t = qa_tls_record;
    return t != &qa_unregistered ? t : NULL;
}
static inline void qa_tls_set(struct qa_thread *t)
{
    qa_tls_record = t != NULL ? t : &qa_unregistered;
}

/* ---- the bootstrap arena (bootstrap.c): dlsym's allocations before the next allocator is
 * known, recognised by address at free ---- */
extern char qa_bootstrap_arena[256 * 1024];
static inline bool qa_in_bootstrap(const void *p)
{
    /* One unsigned comparison: addresses below the arena wrap around to huge offsets. */
    return (uintptr_t)p - (uintptr_t)qa_bootstrap_arena < sizeof qa_bootstrap_arena;
}

/* ---- the next allocator in link order (real.c resolves it at start-up) ---- */
struct qa_real_allocator {
    void *(*malloc_fn)(size_t);
    void (*free_fn)(void *);
    void *(*calloc_fn)(size_t, size_t);
    void *(*realloc_fn)(void *, size_t);
    void *(*reallocarray_fn)(void *, size_t, size_t);
    int (*posix_memalign_fn)(void **, size_t, size_t);
    void *(*aligned_alloc_fn)(size_t, size_t);
    void *(*memalign_fn)(size_t, size_t);
    void *(*valloc_fn)(size_t);
    void *(*pvalloc_fn)(size_t);
    size_t (*usable_size_fn)(void *);
    /* The C library's own, for the interposer's calls: its exported read and syscall are
     * libunwind's wrappers (host/unwinder_fds.c), never meant for the lower layers. */
    ssize_t (*read_fn)(int, void *, size_t);
    long (*syscall_fn)(long, ...);
    /* The loader's, for the interposer's own loads: its exported dlopen and dlclose are the
     * program's (host/loader.c). */
    void *(*dlopen_fn)(const char *, int);
    int (*dlclose_fn)(void *);
};
extern struct qa_real_allocator qa_real;

/* ---- a block's usable size (usable.c decides at start-up whether glibc's chunk header can be
 * read instead of asking). Context: the malloc fast path. ---- */
extern bool qa_usable_from_header;

/* glibc's in-use chunk: a size word before the block, its low three bits flags (2: mmap'd). */
#define QA_CHUNK_MMAPPED ((size_t)2)
static inline size_t qa_chunk_header(const void *p)
{
    size_t header;
    __builtin_memcpy(&header, (const char *)p - sizeof header, sizeof header);
    return header;
}

/* The usable size of a block whose header says a heap chunk (not mmap'd): the fast free path
 * reads the header once and tests the mmap bit, which the bootstrap arena's blocks carry too
 * (bootstrap.c), so that one test sends both to the slow path. */
static inline size_t qa_heap_chunk_usable(size_t header)
{
    return (header & ~(size_t)7) - sizeof header;
}

/* Either kind: an mmap'd chunk keeps both header words to itself; a heap chunk also lends the
 * block the next chunk's first word. This is glibc's own musable(), for a block known to be in
 * use. */
static inline size_t qa_glibc_chunk_usable(const void *p)
{
    size_t header = qa_chunk_header(p);
    return qa_heap_chunk_usable(header) - ((header & QA_CHUNK_MMAPPED) ? sizeof header : 0);
}

static inline size_t qa_usable_size(void *p)
{
    if (__builtin_expect(qa_usable_from_header, 1))
        return qa_glibc_chunk_usable(p);
    return qa_real.usable_size_fn ? qa_real.usable_size_fn(p) : 0;
}

#endif
