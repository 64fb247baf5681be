/* The interposer's base layer: what every other part may call, and which calls nothing above it.
 * Settings, lines on stderr, raw memory and clocks, the start-up state, the next allocator and
 * the usable size of its blocks, the per-thread records with their gate and re-entrancy guard,
 * the interposer's own descriptors, the JSON writer, signal and error names, the lock dumps take,
 * and debug-build assertions. Files: the .c files of base/. */
#ifndef QAUDIT_BASE_H
#define QAUDIT_BASE_H

#include <stdarg.h>

#include "../types.h"

/* ---- assert.c: checks of the interposer's own invariants in a -DQA_DEBUG build (never in a
 * release one). Context: any, signal handlers included: the message is written with write(2)
 * from a stack buffer, nothing allocates; then abort(). ---- */
#ifdef QA_DEBUG
void qa_assert_fail(const char *file, int line, const char *what) __attribute__((noreturn));
#define qa_assert(cond) ((cond) ? (void)0 : qa_assert_fail(__FILE__, __LINE__, #cond))
#else
#define qa_assert(cond) ((void)0)
#endif

/* ---- config.c: QAUDIT_* read once at start-up ---- */
extern struct qa_config qa_cfg;
void qa_config_load(void);
void qa_config_export(void); /* the absolute QAUDIT_OUT into the environment, for exec */

/* ---- log.c: one line on stderr, and the SIGPIPE guard every write of ours goes through.
 * Context: any thread; formats into a stack buffer (vsnprintf), no malloc. ---- */
void qa_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void qa_sigpipe_block(struct qa_sigpipe *g);
void qa_sigpipe_restore(struct qa_sigpipe *g, bool raised); /* raised: the write got EPIPE */

/* ---- system.c: raw memory and clocks (any context) ---- */
void *qa_mmap(size_t bytes);
uint64_t qa_now_ns(void);       /* CLOCK_REALTIME: the times a dump gives */
uint64_t qa_monotonic_ns(void); /* CLOCK_MONOTONIC: the writer thread's schedule */

/* ---- lifecycle.c: how far start-up has come, and when this process image began ---- */
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
/* True when no setting needs more than counting and sampling (stacks off, sampled, or only
 * inside queue operations; no site patterns, poison or fault injection) and block sizes come
 * from chunk headers. Threads start with QA_GATE_FULL otherwise. Set before any thread
 * registers. */
extern bool qa_fast_path;
void qa_image_started(void);      /* the preload's start in this image, or a fork's */
uint64_t qa_image_start_ns(void); /* CLOCK_REALTIME */

/* ---- bootstrap.c: dlsym's allocations before the next allocator is known, from a static
 * arena, each block with its size in front; recognised by address at free ---- */
extern char qa_bootstrap_arena[256 * 1024];
static inline bool qa_in_bootstrap(const void *p)
{
    /* One unsigned comparison: addresses below the arena wrap around to huge offsets. */
    return (uintptr_t)p - (uintptr_t)qa_bootstrap_arena < sizeof qa_bootstrap_arena;
}
void *qa_bootstrap_alloc(size_t size, size_t align);
size_t qa_bootstrap_size(const void *p);

/* ---- real.c: the next allocator in link order, resolved once at start-up ---- */
struct qa_real_allocator {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*malloc_usable_size)(void *);
};
extern struct qa_real_allocator qa_real;
bool qa_real_resolve(void); /* false: no allocator after this one (nothing can be counted) */
size_t qa_real_usable_size(void *p);

/* ---- usable.c: a block's usable size, from glibc's chunk header when that is provably the
 * same as asking (decided at start-up). Context: the malloc fast path. ---- */
extern bool qa_usable_from_header;
void qa_usable_choose(const struct qa_usable_probe *next);
const char *qa_usable_source(void);

/* glibc's in-use chunk: a size word before the block, its low three bits flags (2: mmap'd). An
 * mmap'd chunk keeps both header words to itself; a heap chunk also lends the block the next
 * chunk's first word. This is glibc's own musable(), for a block known to be in use. */
static inline size_t qa_glibc_chunk_usable(const void *p)
{
    size_t header;
    __builtin_memcpy(&header, (const char *)p - sizeof header, sizeof header);
    size_t mmapped = (header & 2) ? sizeof header : 0;
    return (header & ~(size_t)7) - sizeof header - mmapped;
}

static inline size_t qa_usable_size(void *p)
{
    if (__builtin_expect(qa_usable_from_header, 1))
        return qa_glibc_chunk_usable(p);
    return qa_real_usable_size(p);
}

/* ---- threads.c: per-thread records, mapped on a thread's first counted call (once ready),
 * reused after it exits; found through initial-exec TLS, so reading it never allocates ---- */
extern __thread struct qa_thread *qa_tls_self __attribute__((tls_model("initial-exec")));
/* What a part sets up in each record, called by threads.c on the slow path: a record's first
 * mapping (order: how many were mapped before it), and each new owner of it. */
struct qa_thread_parts {
    void (*new_record)(struct qa_thread *t, uint64_t order);
    void (*new_owner)(struct qa_thread *t);
};
void qa_threads_init(const struct qa_thread_parts *parts); /* once, before any thread registers */
struct qa_thread *qa_thread_register(void);
struct qa_thread *qa_threads_reset_after_fork(void); /* the child's one record */
struct qa_thread *qa_threads_head(void); /* every record, linked by next; walk without locks */

_Static_assert(offsetof(struct qa_thread, gate) == 0, "gate is the record's first field");

/* The calling thread's record, registering it on its first call; NULL when it cannot be. */
static inline struct qa_thread *qa_self(void)
{
    if (__builtin_expect(qa_tls_self == NULL, 0))
        qa_tls_self = qa_thread_register();
    return qa_tls_self;
}

/* Never registers: async-signal-safe. */
static inline struct qa_thread *qa_self_if_registered(void)
{
    return qa_tls_self;
}

/* Sets the re-entrancy guard; returns whether it was set already, for qa_guard_restore. While
 * it is set, allocations (by libunwind, dladdr, pthread_create, the interposer) are forwarded
 * uncounted. */
static inline bool qa_guard(struct qa_thread *t)
{
    bool was = t->gate & QA_GATE_BUSY;
    t->gate |= QA_GATE_BUSY;
    return was;
}

static inline void qa_guard_restore(struct qa_thread *t, bool was)
{
    if (!was)
        t->gate &= ~(unsigned)QA_GATE_BUSY;
}

/* The thread to count for, the guard set, or NULL when this call must only be forwarded (the
 * guard was set: the interposer is allocating). Registers a new thread. */
static inline struct qa_thread *qa_enter(void)
{
    struct qa_thread *t = qa_self();
    if (t == NULL || qa_guard(t))
        return NULL;
    return t;
}

/* The end of an entered call: the guard it set comes off. */
static inline void qa_leave(struct qa_thread *t)
{
    qa_assert(t->gate & QA_GATE_BUSY);
    qa_guard_restore(t, false);
}

/* ---- private_fd.c: descriptors of the interposer's own, used only while still its own ---- */
bool qa_file_open(struct qa_file *f, const char *path, int flags, mode_t mode);
bool qa_file_openat(struct qa_file *f, int dirfd, const char *name, int flags, mode_t mode);
bool qa_file_still_ours(const struct qa_file *f);
bool qa_file_write_all(struct qa_file *f, const void *data, size_t size);
ssize_t qa_file_read(struct qa_file *f, void *buf, size_t size);
int qa_file_close(struct qa_file *f);
ssize_t qa_file_slurp(const char *path, char *buf, size_t size);

/* ---- json.c: a JSON writer into mmap'd memory (no malloc; integers formatted by hand, so it
 * serves a fatal signal's dump) ---- */
void qa_json_release(struct qa_json *j);
void qa_json_raw(struct qa_json *j, const char *s, size_t n);
void qa_json_key(struct qa_json *j, const char *key);
void qa_json_begin_object(struct qa_json *j);
void qa_json_end_object(struct qa_json *j);
void qa_json_begin_array(struct qa_json *j);
void qa_json_end_array(struct qa_json *j);
void qa_json_u64(struct qa_json *j, uint64_t v);
void qa_json_i64(struct qa_json *j, int64_t v);
void qa_json_bool(struct qa_json *j, bool v);
void qa_json_str(struct qa_json *j, const char *s);
void qa_json_strn(struct qa_json *j, const char *s, size_t n);
void qa_json_hex(struct qa_json *j, uintptr_t v);
void qa_json_double(struct qa_json *j, double v);
/* "frames": ["0x...", ...] */
void qa_json_frames(struct qa_json *j, void *const *frames, int depth);
size_t qa_u64_text(char *out, uint64_t v); /* decimal, NUL-terminated; its length */

/* ---- names.c: names of signals and errors (async-signal-safe: no strerror), and the last
 * ending signal a program's handler took, for the dump ---- */
const char *qa_signal_name(int signo);
const char *qa_error_text(int error);
void qa_note_last_signal(int signo);
const char *qa_last_signal(void); /* NULL when none */

/* ---- lock.c: the dump lock. A futex word holding its holder's tid: a dump writes under it,
 * the timeline appends its points under it, fork holds it across. A handler that finds its own
 * tid there (a crash inside a dump) knows not to wait. ---- */
void qa_dump_lock(void);
void qa_dump_unlock(void);
bool qa_dump_lock_bounded(void); /* false at once for its holder, else after about 5 s */
void qa_dump_lock_reset_after_fork(void);

#endif
