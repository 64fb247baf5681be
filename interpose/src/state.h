/* Internal state shared by the parts of libqaudit-preload.so. Nothing here may allocate through
 * malloc: the interposer's own memory comes from mmap (qa_mmap) or static storage. */
#ifndef QAUDIT_STATE_H
#define QAUDIT_STATE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The interposed functions; everything else in the library stays hidden. */
#define QA_EXPORT __attribute__((visibility("default")))

#define QA_MAX_DEPTH 64
#define QA_PATH_MAX 1024
#define QA_MAX_PATTERNS 32
#define QA_MAX_RANGES 512
#define QA_SIZE_BUCKETS                                                                            \
    64                      /* requested-size histogram: 16-byte steps to 512, then powers of two  \
                             */
#define QA_USABLE_SLOTS 512 /* usable-size histogram: distinct values seen, first come */

enum qa_stacks {
    QA_STACKS_OFF,
    QA_STACKS_SAMPLED,
    QA_STACKS_ALWAYS,
    QA_STACKS_FP,
    QA_STACKS_QUEUE
};
enum qa_fail_mode { QA_FAIL_NONE, QA_FAIL_NTH, QA_FAIL_EVERY, QA_FAIL_PROBABILITY };
enum qa_poison { QA_POISON_OFF, QA_POISON_ALL, QA_POISON_QUEUE };
enum qa_assert { QA_ASSERT_OFF, QA_ASSERT_REPORT, QA_ASSERT_ABORT };

struct qa_config {
    char out_pattern[512];
    enum qa_stacks stacks;
    uint64_t sample_every; /* sampled: every Nth allocation, or one per N bytes */
    bool sample_by_bytes;
    unsigned depth;
    int signal;           /* 0: none */
    bool signal_explicit; /* QAUDIT_SIGNAL was set */
    unsigned interval;
    unsigned timeline_ms; /* QAUDIT_TIMELINE: period of the memory-over-time points, 0 off */
    char sites[1024];     /* QAUDIT_QUEUE_SITES, comma-separated patterns */
    enum qa_fail_mode fail_mode;
    uint64_t fail_n;
    double fail_probability;
    uint64_t fail_seed;
    char fail_site[128];
    uint64_t fail_size_min, fail_size_max;
    enum qa_poison poison;
    unsigned char poison_byte;
    enum qa_assert assert_depth1;
    bool follow_exec;
    char fallback_dir[256]; /* QAUDIT_FALLBACK_DIR (default /tmp): dumps the run's refuses */
    char run_id[33];        /* QAUDIT_RUN_ID: set by qaudit run, in every dump */
    uint64_t seed;          /* QAUDIT_SEED: the sampling seed, when seed_set */
    bool seed_set;
};

extern struct qa_config qa_cfg;

/* Per-thread counters, in one mmap'd block per thread linked into a global list; summed when a
 * dump is written, so the hot path touches only its own cache lines. */
struct qa_counters {
    /* Allocations, frees and live blocks and bytes are derived from these (qa_counters_*), so
     * that a malloc/free pair updates as few of them as possible. */
    uint64_t by_call[12];
    uint64_t bytes_requested, bytes_usable, bytes_freed_usable;
    uint64_t reallocs, realloc_in_place, realloc_moved, failed, temporary;
    /* A forked child's frees of blocks it inherited at the fork (owned.c tells them apart):
     * by free(), taken over by a realloc (the new block is the child's own), and their bytes. */
    uint64_t inherited_freed, inherited_reallocated, inherited_freed_bytes;
    uint64_t size_hist[QA_SIZE_BUCKETS];
    uint64_t fail_index;
    uint64_t rng;
};

/* A thread's recent usable sizes with their counts (the allocator's classes: few distinct). */
#define QA_LOCAL_USABLE 64
struct qa_usable_local {
    size_t size;
    uint64_t count;
};

/* A thread's pending site counter updates: flushed to the shared site record when the slot is
 * needed for another site, and at dump time, so two threads never fight over a site's line. */
#define QA_LOCAL_SITES 256
struct qa_site_delta {
    uint32_t id;
    uint64_t allocs, frees, bytes, queue_allocs, never_written, temporary;
    uint64_t weight_allocs, weight_bytes; /* sampled: what the samples stand for (sampling.c) */
    int64_t live_bytes, live_peak;        /* live_peak: highest live_bytes since the last flush */
    uint64_t inherited_freed,
        inherited_freed_bytes; /* a forked child's frees of inherited blocks */
};

/* Usable sizes up to this are counted by the thread directly, indexed by size / 8 (the classes
 * of every allocator modelled are multiples of 8 there); larger ones use the small table. */
#define QA_DIRECT_USABLE 4096
/* Requested sizes up to this are counted in 16-byte steps, folded into the size buckets when
 * summed: cheaper than computing the bucket on every call. */
#define QA_DIRECT_REQUESTED 4096

struct qa_thread {
    /* What every call reads first, in the line the counters start in: 0 lets the call take the
     * fast path (count and forward); otherwise the QA_GATE_* bits say why it cannot. */
    unsigned gate;
    /* The queue operation under way on this thread (between QUEUE_ENTER and QUEUE_LEAVE). */
    const void *queue_op;
    /* Stacks sampled:N: allocations (or bytes) left before the next sampled stack. */
    int64_t sample_left;
    /* The thread's last new block: freed before the thread allocates again, it was temporary
     * (heaptrack's definition). */
    uintptr_t last_alloc;
    int64_t live_at_publish; /* this thread's live bytes when it last published them */
    int64_t peak_usable;     /* this thread's own highest live bytes */
    struct qa_counters c;
    uint64_t usable_direct[QA_DIRECT_USABLE / 8 + 1];
    uint64_t requested_direct[QA_DIRECT_REQUESTED / 16 + 1]; /* [i]: sizes 16i-15 .. 16i */
    struct qa_usable_local usable[QA_LOCAL_USABLE];
    struct qa_site_delta site_deltas[QA_LOCAL_SITES];
    struct qa_thread *next;
    uint64_t queue_op_depth;
    /* The record of the last queue this thread sent an event for: a queue's events come from the
     * thread that owns it, so consecutive push/pop events skip the shared index. */
    const void *cached_queue;
    void *cached_record;
    /* Records are reused, never unmapped (threads.c): the kernel tid of the thread counting into
     * this one, and the link in the list of records whose thread has exited. */
    int owner_tid;
    struct qa_thread *retired_next;
    /* A new owner's first counted call (stats.c): live_at_publish waits at
     * QA_LIVE_NEVER_PUBLISHED for it, and the record's published live bytes wait here. */
    int64_t live_resume;
    uint64_t allocs_before_owner; /* the record's allocations when its owner took it */
    bool owner_allocated;         /* the owner is counted in totals.threads */
    /* The loader calls (libunwind's stack walk, dlopen, dlclose) the thread is inside (sites.c):
     * fork waits for every other thread's count to drop to zero. */
    _Atomic int unwinding;
    bool record_counted; /* the record has published live bytes */
    uint64_t sample_rng; /* sampling.c's random stream */
};

enum qa_call {
    QA_MALLOC,
    QA_CALLOC,
    QA_REALLOC,
    QA_REALLOCARRAY,
    QA_POSIX_MEMALIGN,
    QA_ALIGNED_ALLOC,
    QA_MEMALIGN,
    QA_VALLOC,
    QA_PVALLOC,
    QA_FREE,
    QA_CALL_COUNT
};

enum {
    QA_GATE_BUSY = 1,     /* re-entrancy guard: allocations are forwarded uncounted */
    QA_GATE_QUEUE_OP = 2, /* inside a queue operation: allocations are attributed to it */
    QA_GATE_FULL = 4      /* the settings need more than counting, for every call */
};

/* Sets the re-entrancy guard; returns whether it was set already, for qa_guard_restore. */
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

/* preload.c */
extern atomic_int qa_ready; /* 2 once the real allocator is resolved and state set up */
/* True when no setting needs more than counting and sampling (stacks off, sampled, or only
 * inside queue operations; no site patterns, poison or fault injection) and block sizes come from
 * chunk headers. Threads start with QA_GATE_FULL otherwise. */
extern bool qa_fast_path;
struct qa_thread *qa_self(void);
struct qa_thread *qa_self_if_registered(void); /* never registers: async-signal-safe */
void *qa_mmap(size_t bytes);
void qa_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t qa_now_ns(void);       /* CLOCK_REALTIME: the times a dump gives */
uint64_t qa_monotonic_ns(void); /* CLOCK_MONOTONIC: the writer thread's schedule */

/* usable.c: a block's usable size */
struct qa_usable_probe {
    void *(*malloc)(size_t);
    void *(*memalign)(size_t, size_t);
    void (*free)(void *);
    size_t (*usable_size)(void *);
};
extern bool qa_usable_from_header;
void qa_usable_choose(const struct qa_usable_probe *next);
const char *qa_usable_source(void);
size_t qa_real_usable_size(void *p); /* preload.c: the next allocator's malloc_usable_size */

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

/* threads.c: per-thread records, reused when their thread has exited */
void qa_threads_init(void); /* once, before any thread registers */
struct qa_thread *qa_thread_register(void);
struct qa_thread *qa_threads_reset_after_fork(void); /* the child's one record */
struct qa_thread *qa_threads_head(void); /* every record, linked by next; walk without locks */

/* stats.c */
void qa_live_new_owner(struct qa_thread *t);
void qa_sum_counters(struct qa_counters *out, uint64_t *threads);
void qa_usable_hist_add_slow(struct qa_thread *t, size_t usable);
size_t qa_usable_hist(size_t *sizes, uint64_t *counts, size_t max);
void qa_live_publish(struct qa_thread *t, int64_t live);

static inline uint64_t qa_counters_aligned(const struct qa_counters *c)
{
    return c->by_call[QA_POSIX_MEMALIGN] + c->by_call[QA_ALIGNED_ALLOC] + c->by_call[QA_MEMALIGN] +
           c->by_call[QA_VALLOC] + c->by_call[QA_PVALLOC];
}

static inline uint64_t qa_counters_allocs(const struct qa_counters *c)
{
    return c->by_call[QA_MALLOC] + c->by_call[QA_CALLOC] + qa_counters_aligned(c);
}

static inline int64_t qa_counters_live_bytes(const struct qa_counters *c)
{
    return (int64_t)(c->bytes_usable - c->bytes_freed_usable);
}

/* realloc neither adds nor removes a block. */
static inline int64_t qa_counters_live_blocks(const struct qa_counters *c)
{
    return (int64_t)(qa_counters_allocs(c) - c->by_call[QA_FREE]);
}

/* Live bytes and blocks of the whole image: a forked child's inheritance included. */
int64_t qa_live_bytes_total(const struct qa_counters *c);
int64_t qa_live_blocks_total(const struct qa_counters *c);

/* Frees of blocks this image allocated itself: in a forked child, free() calls less those of
 * inherited blocks. */
static inline uint64_t qa_counters_own_frees(const struct qa_counters *c)
{
    return c->by_call[QA_FREE] - c->inherited_freed;
}

/* Each record tracks its own live bytes and peak without atomics; the shared total is updated
 * when the record's live bytes have moved QA_LIVE_BATCH since it last published them, and on its
 * owner's first counted call, to count the thread (live_at_publish starts far out of range). */
#define QA_LIVE_BATCH (64 * 1024)
#define QA_LIVE_NEVER_PUBLISHED (INT64_MIN / 4)
static inline void qa_live_check(struct qa_thread *t, int64_t live)
{
    uint64_t moved = (uint64_t)(live - t->live_at_publish) + (QA_LIVE_BATCH - 1);
    if (__builtin_expect(moved > 2 * (QA_LIVE_BATCH - 1), 0))
        qa_live_publish(t, live);
}

/* After an allocation: the peak can only rise then. */
static inline void qa_live_grew(struct qa_thread *t)
{
    int64_t live = qa_counters_live_bytes(&t->c);
    if (live > t->peak_usable)
        t->peak_usable = live;
    qa_live_check(t, live);
}

static inline void qa_live_shrank(struct qa_thread *t)
{
    qa_live_check(t, qa_counters_live_bytes(&t->c));
}
int64_t qa_peak_live(void);
void qa_peak_observe(int64_t live);
uint64_t qa_thread_total(void); /* thread records that counted: a bound on threads alive at once */
void qa_stats_reset_after_fork(void);

/* 16-byte steps up to 512 (32 buckets), then one bucket per power of two. Branch-free: requested
 * sizes are as random as the program's, and a mispredicted branch here costs more than the rest
 * of the counting. */
static inline unsigned qa_size_bucket(size_t size)
{
    size_t below = size - (size != 0); /* sizes 0 and 1 both land in bucket 0 */
    unsigned linear = (unsigned)(below >> 4);
    /* 513..1024 is bucket 32: floor(log2(size - 1)) is 9 there. */
    unsigned power = 23 + (unsigned)(63 - __builtin_clzll(below | 1));
    power = power < QA_SIZE_BUCKETS ? power : QA_SIZE_BUCKETS - 1;
    unsigned small = 0u - (unsigned)(below < 512); /* a mask, so that GCC cannot branch */
    return (linear & small) | (power & ~small);
}

/* The requested-size histogram. Every step of requested_direct lies in one bucket: the buckets'
 * bounds are multiples of 16. */
static inline void qa_size_hist_add(struct qa_thread *t, size_t size)
{
    if (__builtin_expect(size <= QA_DIRECT_REQUESTED, 1)) {
        t->requested_direct[(size + 15) / 16]++;
        return;
    }
    t->c.size_hist[qa_size_bucket(size)]++;
}

/* Usable sizes are the allocator's size classes, a small set; the common ones are counted in a
 * table indexed by size. */
static inline void qa_usable_hist_add(struct qa_thread *t, size_t usable)
{
    if (__builtin_expect(usable <= QA_DIRECT_USABLE && (usable & 7) == 0, 1)) {
        t->usable_direct[usable / 8]++;
        return;
    }
    qa_usable_hist_add_slow(t, usable);
}
size_t qa_size_bucket_floor(unsigned bucket);

/* blocks.c: what is known of each live block (only when stacks or poison need it) */
struct qa_block {
    uintptr_t ptr;
    uint64_t size;
    uint32_t site; /* 0: none */
    uint16_t flags;
    uint16_t generation; /* qa_fork_generation when recorded: older ones were inherited */
};
enum { QA_BLOCK_POISONED = 1, QA_BLOCK_QUEUE = 2 };
extern bool qa_blocks_enabled;
void qa_blocks_init(void);
bool qa_blocks_insert(const struct qa_block *b);
bool qa_blocks_remove(uintptr_t ptr, struct qa_block *out);
void qa_blocks_lock_all(void);
void qa_blocks_unlock_all(void);
extern atomic_uint_fast64_t qa_blocks_dropped;
bool qa_blocks_may_hold(uintptr_t ptr);

/* owned.c: in a forked child, which live blocks it allocated itself (docs/design.md, "Forks").
 * Context: the malloc fast path; nothing here allocates or locks. */
extern bool qa_owned_tracking; /* true in a forked child */
extern atomic_uint_fast64_t qa_owned_untracked;
void qa_owned_mark(const void *block);
bool qa_owned_take(const void *block); /* false: not marked, so inherited */
void qa_owned_reset_after_fork(void);

/* inherited.c: what a forked child held at its fork, kept apart from what it does itself */
extern uint16_t qa_fork_generation; /* 0 in the image that loaded the preload, +1 per fork */
struct qa_inherited {
    int64_t blocks, bytes; /* live at the fork: the parent's own and what it still inherited */
    int64_t parent_peak;   /* the parent's peak live bytes at the fork (memory.c's check) */
    int32_t parent_pid;
    uint64_t parent_start_ns;
};
extern struct qa_inherited qa_inherited;
bool qa_is_forked_child(void);
void qa_inherited_before_fork(void);
void qa_inherited_after_fork_child(void); /* before the counters are reset */

/* sites.c: call stacks and the sites they identify */
int qa_capture(void **frames, unsigned max, bool frame_pointers);
uint32_t qa_site_for(void *const *frames, int depth);
void qa_site_alloc(struct qa_thread *t, uint32_t site, uint64_t size, bool queue);
void qa_site_free(struct qa_thread *t, uint32_t site, uint64_t size, uint64_t never_written,
                  bool temporary);
void qa_site_free_inherited(struct qa_thread *t, uint32_t site, uint64_t size);

/* sampling.c: random intervals for stacks sampled:N, and what one sample stands for */
#define QA_WEIGHT_ONE 1024   /* fixed point of sampled allocation weights */
void qa_sampling_init(void); /* the process's seed: QAUDIT_SEED, or drawn */
uint64_t qa_sampling_seed(void);
void qa_sampling_before_fork(void);
void qa_sampling_after_fork_child(struct qa_thread *self);
void qa_sample_seed(struct qa_thread *t, uint64_t order);
int64_t qa_sample_interval(struct qa_thread *t);
void qa_sample_weight(uint64_t size, uint64_t *allocs, uint64_t *bytes);
enum { QA_PATTERNS_QUEUE = 1, QA_PATTERNS_FAIL = 2 };
bool qa_frames_match(void *const *frames, int depth, unsigned set);
bool qa_frames_match_patterns(void *const *frames, int depth);
void qa_patterns_hold(void);
void qa_patterns_release(void);
void qa_loader_enter(struct qa_thread *t); /* around loader calls fork must not split */
void qa_loader_leave(struct qa_thread *t);
void qa_unwinds_block(
    void); /* before fork: waits for every loader call under way, holds new ones */
void qa_unwinds_unblock(void); /* after fork, in parent and child */
void qa_patterns_resolve(void);
bool qa_patterns_active(void);
struct qa_site_view {
    uint32_t id;
    int depth;
    void *const *frames;
    uint64_t allocs, frees, bytes, live_bytes, peak_live_bytes, never_written, queue_allocs;
    uint64_t temporary, weight_allocs, weight_bytes;
    /* A forked child's: what the site held at the fork, and what of it the child freed. */
    int64_t inherited_blocks, inherited_bytes;
    uint64_t inherited_freed, inherited_freed_bytes;
    bool touched; /* the image counted something at the site itself */
};
uint32_t qa_site_count(void);
bool qa_site_get(uint32_t id, struct qa_site_view *out);
void qa_sites_flush_all(void); /* a forked child's pending counts are its parent's (inherited.c) */
extern atomic_uint_fast64_t qa_sites_dropped, qa_stacks_truncated;

/* queues.c: the hook consumer */
void qa_queue_on_alloc(struct qa_thread *t, uint64_t size, void *const *frames, int depth);
bool qa_queue_in_op(const struct qa_thread *t);
struct qa_json;
void qa_queue_write(struct qa_json *j);
void qa_queue_write_checks(struct qa_json *j, bool final); /* final: the image's last dump */
void qa_queue_reset_after_fork(void);

/* Other allocators' own entry points, counted as the malloc family (docs/design.md, "What the
 * interposer cannot see"). preload.c: the counting; extra.c: the table the shims call and the
 * shims' frames; unseen.c: start-up and the dump's fields for what stays invisible. */
typedef void *(*qa_forward_fn)(void *args);
void *qa_extra_alloc(enum qa_call call, size_t size, bool may_fail, qa_forward_fn forward,
                     void *args, bool *seen);
void qa_extra_free(void *p, qa_forward_fn forward, void *args, bool *seen);
void *qa_extra_resize(enum qa_call call, void *old, size_t size, bool zeroed, qa_forward_fn forward,
                      void *args, bool *seen);
int qa_extra_strip(void **frames, int depth, int max);
void qa_unseen_start(void);
struct qa_json;
bool qa_unseen_write(struct qa_json *j); /* false: something was not seen (precision.exact) */

/* faults.c: injected failures and poison */
bool qa_fault_should_fail(struct qa_thread *t, size_t size, void **frames, int *depth);
void qa_fault_write(struct qa_json *j);
void qa_poison_fill(void *p, size_t size);
uint64_t qa_poison_count(const void *p, size_t size);

/* dump.c */
enum qa_dump_reason {
    QA_DUMP_EXIT,     /* exit() or return from main: the destructor */
    QA_DUMP_SIGNAL,   /* QAUDIT_SIGNAL */
    QA_DUMP_INTERVAL, /* QAUDIT_INTERVAL */
    QA_DUMP_REQUEST,  /* before QAUDIT_ASSERT_DEPTH1=abort aborts */
    QA_DUMP_EXIT_NOW, /* _exit, _Exit */
    QA_DUMP_EXEC,     /* just before execve replaces the image */
    QA_DUMP_FATAL,    /* a signal about to end the process */
    QA_DUMP_SNAPSHOT  /* `qaudit snapshot`'s request in the control record */
};
void qa_dump(enum qa_dump_reason reason);
void qa_dump_final(enum qa_dump_reason reason, int signo); /* async-signal-safe, once */
void qa_dump_note_deepbind(const char *path);
void qa_dump_lock(void);

/* timeline.c: memory over time, a bounded series the writer thread fills */
void qa_timeline_start(void);
bool qa_timeline_on(void);
uint64_t qa_timeline_due(void);
void qa_timeline_take(void);
void qa_timeline_write(struct qa_json *j, uint64_t now_ns);
void qa_dump_unlock(void);
void qa_dump_before_fork(void);
void qa_dump_after_fork_parent(void);
void qa_dump_reset_after_fork(void);
void qa_dump_started(void);
uint64_t qa_dump_start_ns(void);

/* dump_file.c: dump names, claimed so that processes never overwrite each other's dumps */
struct qa_file;
void qa_dump_file_init(bool after_fork);
bool qa_dump_file_is_image_process(void);
enum qa_dump_file_result { QA_DUMP_FILE_PLACED, QA_DUMP_FILE_NOT_WRITTEN, QA_DUMP_FILE_NOT_PLACED };
enum qa_dump_kind { QA_DUMP_KIND_FINAL, QA_DUMP_KIND_SNAPSHOT, QA_DUMP_KIND_INTERVAL };
enum qa_dump_file_result qa_dump_file_put(uint64_t sequence, enum qa_dump_kind kind,
                                          const char *data, size_t size, char *tmp, size_t tmp_size,
                                          char *path, size_t path_size);
void qa_dump_file_hold_directories(void); /* before a chroot */

/* dump_dirs.c: the dump directories, reachable after a chroot */
void qa_dump_dirs_hold(const char *path_in_it);
void qa_dump_dirs_locate(const char *path, int *dirfd, const char **name);

/* chroot.c */
void qa_chroot_resolve(void);

/* modules.c: the loaded objects, for symbolizing frames later */
#define QA_MAX_MODULES 128
struct qa_module {
    char path[200];
    uintptr_t base, lo, hi;
    char build_id[41];
};
struct qa_module_list {
    struct qa_module items[QA_MAX_MODULES];
    size_t count, dropped;
};
void qa_modules_changed(void);
const struct qa_module_list *qa_modules_hold_fresh(void); /* then qa_modules_release */
const struct qa_module_list *qa_modules_current(void);
void qa_modules_hold(void);
void qa_modules_release(void);

/* private_fd.c: descriptors of the interposer's own, used only while still its own */
struct qa_file {
    int fd;
    dev_t dev;
    ino_t ino;
};
bool qa_file_open(struct qa_file *f, const char *path, int flags, mode_t mode);
bool qa_file_openat(struct qa_file *f, int dirfd, const char *name, int flags, mode_t mode);
bool qa_file_still_ours(const struct qa_file *f);
bool qa_file_write_all(struct qa_file *f, const void *data, size_t size);
ssize_t qa_file_read(struct qa_file *f, void *buf, size_t size);
int qa_file_close(struct qa_file *f);
ssize_t qa_file_slurp(const char *path, char *buf, size_t size);
/* The resident set from /proc/self/statm (memory.c); 0 when it cannot be read. */
uint64_t qa_resident_bytes(void);
struct qa_sigpipe {
    sigset_t pipe_only, saved;
    bool was_pending;
};
void qa_sigpipe_block(struct qa_sigpipe *g);
void qa_sigpipe_restore(struct qa_sigpipe *g, bool raised); /* raised: the write got EPIPE */

/* unwinder_fds.c: libunwind keeps no descriptor in the host (pipe2, read, syscall) */
void qa_unwinder_fds_init(void);

/* exits.c: _exit, _Exit and the exec family */
void qa_exits_resolve(void);

/* signals.c: the dump signal, fatal signals, and the program's view of both */
void qa_signals_install(void);
const char *qa_signal_name(int signo);
const char *qa_signals_last(void); /* the last ending signal a program's handler took, or NULL */
const char *qa_error_text(int error);

/* json.c: a JSON writer into a fixed buffer, flushed to a file descriptor */
struct qa_json {
    char *buf; /* mmap'd; NULL until the first byte */
    size_t len, capacity;
    bool failed, need_comma;
};
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

/* control.c: the record `qaudit snapshot` reads (qaudit/control.h) */
void qa_control_init(const char *pattern, int signal_number, uint64_t start_time_ns);
void qa_control_signal_state(uint32_t state);
void qa_control_dump_written(const char *path);
void qa_control_after_fork_child(uint64_t start_time_ns);
#define QA_REQUEST_POLL_MS                                                                         \
    100 /* the writer thread reads the control record's request this often                         \
         */
void qa_control_writer_state(uint32_t state);
uint64_t qa_control_pending_request(void); /* 0: none */
void qa_control_request_served(uint64_t request);
void qa_control_dump_failed(const char *reason);

/* config.c */
void qa_config_load(void);
void qa_config_export(void); /* the absolute QAUDIT_OUT into the environment, for exec */

/* writer.c */
void qa_writer_start(void);
void qa_writer_wake(void); /* async-signal-safe */
void qa_writer_after_fork_child(void);

/* fork.c */
void qa_fork_handlers_install(void);

#endif
