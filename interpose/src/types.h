/* The data the parts of libqaudit-preload.so share, apart from their functions (each layer's
 * header has those: base/base.h, records/records.h, output/output.h, host/host.h). Each type is
 * labelled with the part that owns it: only that part's files write its fields (the thread
 * record's fields are grouped by owner likewise). Nothing here allocates through malloc: the
 * interposer's memory comes from mmap (qa_mmap) or static storage. */
#ifndef QAUDIT_TYPES_H
#define QAUDIT_TYPES_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The interposed functions; everything else in the library stays hidden. */
#define QA_EXPORT __attribute__((visibility("default")))
/* An exported name for a hidden body (mimalloc's alias style), for an entry point the preload
 * itself also calls: its own calls go to the hidden name, bound at link time, so none of them
 * goes through an exported symbol, whose binding depends on how the library was loaded
 * (preloaded, it is the interposer; attached with dlopen, the C library's). tests/
 * test_self_binding.c checks the library's relocations for it. */
#define QA_EXPORT_AS(body) __attribute__((alias(#body), visibility("default")))

/* ---- base/config.c: the settings, read once at start-up ---- */
#define QA_MAX_DEPTH 64
#define QA_LAST_ALLOC_SPENT ((uintptr_t)1) /* qa_thread.last_alloc: a free came after it */
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
    int program_pid;        /* QAUDIT_PROGRAM_PID: the process qaudit run started, 0 unknown */
    uint64_t seed;          /* QAUDIT_SEED: the sampling seed, when seed_set */
    bool seed_set;
    bool unwind_check;     /* QAUDIT_UNWIND_CHECK=1: each `always` stack walked both ways */
    char pythonmalloc[32]; /* PYTHONMALLOC as the process started, "" when unset: whether a
                              Python's objects reach malloc, said in every dump */
};

/* ---- the thread record (base/threads.c maps, links and reuses it; its fields belong to the
 * parts named beside them) ---- */
/* Per-thread counters, in one mmap'd block per thread linked into a global list; summed when a
 * dump is written, so the hot path touches only its own cache lines. */
struct qa_counters {
    /* Allocations, frees and live blocks and bytes are derived from these (qa_counters_*), so
     * that a malloc/free pair updates as few of them as possible. */
    uint64_t by_call[12];
    /* bytes_freed_usable: 0 in a record, whose live bytes are words of their own
     * (qa_thread_live_bytes); a sum's (qa_sum_counters) is its bytes_usable less its live. */
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

/* A thread's recent stacks: the hash of a stack's return addresses -> its site, in front of the
 * shared index (records/sites.c, qa_site_of_stack). A hit is confirmed against the site's own
 * frames, which never change once the site is published, so a stale or colliding entry is a miss,
 * never a wrong site. 256 entries of 16 bytes: 4 KiB per thread record, written only when stacks
 * are taken (untouched pages of the mapping in counting mode). */
#define QA_STACK_MEMO 256
struct qa_stack_memo {
    uint64_t hash;
    uint32_t site, depth;
};

/* Usable sizes up to this are counted by the thread directly, indexed by size / 8 (the classes
 * of every allocator modelled are multiples of 8 there); larger ones use the small table. */
#define QA_DIRECT_USABLE 4096
/* Requested sizes up to this are counted in 16-byte steps, folded into the size buckets when
 * summed: cheaper than computing the bucket on every call. */
#define QA_DIRECT_REQUESTED 4096

struct qa_thread {
    /* base (the gate and the re-entrancy guard, base.h's inline functions). What every call
     * reads first, in the line the counters start in: 0 lets the call take the fast path (count
     * and forward); otherwise the QA_GATE_* bits say why it cannot. Must stay the first field:
     * base.h asserts it. */
    unsigned gate;
    /* output/looks.c (counted down in records/counting.h): counted allocations left before the
     * thread marks itself QA_GATE_LOOK, so that its next call looks at the writer and the
     * timeline; in the gate's line, where the fast path reads anyway. */
    uint32_t look_left;
    /* records/queues.c: the queue operation under way (between QUEUE_ENTER and QUEUE_LEAVE). */
    const void *queue_op;
    /* records/sampling.c: allocations (or bytes) left before the next sampled stack. */
    int64_t sample_left;
    /* records/counting.h: the thread's last new block: freed before the thread allocates or
     * frees again, it was temporary (heaptrack's definition); after a free, the freed address
     * plus QA_LAST_ALLOC_SPENT. */
    uintptr_t last_alloc;
    /* records/stats.c: live bytes when last published, and the thread's own highest. */
    int64_t live_at_publish;
    int64_t peak_usable;
    /* records/counting.h: the record's live bytes as words the fast path moves by the block's
     * usable size and tests by sign: how far they are below peak_usable (live bytes are
     * peak_usable - below_peak), and how far they may rise or fall before the next
     * publication (qa_live_publish: below 0). */
    int64_t below_peak;
    int64_t publish_up, publish_down;
    /* records/stats.c (and counting.h on the fast path; faults.c its own three fields) */
    struct qa_counters c;
    uint64_t usable_direct[QA_DIRECT_USABLE / 8 + 1];
    uint64_t requested_direct[QA_DIRECT_REQUESTED / 16 + 1]; /* [i]: sizes 16i-15 .. 16i */
    struct qa_usable_local usable[QA_LOCAL_USABLE];
    /* records/sites.c */
    struct qa_site_delta site_deltas[QA_LOCAL_SITES];
    /* base/threads.c: every record, never unlinked */
    struct qa_thread *next;
    /* records/queues.c: the depth the operation leaves, and the record of the last queue this
     * thread sent an event for (a queue's events come from the thread that owns it, so
     * consecutive push/pop events skip the shared index). */
    uint64_t queue_op_depth;
    const void *cached_queue;
    void *cached_record;
    /* base/threads.c: records are reused, never unmapped: the kernel tid of the thread counting
     * into this one, and the link in the list of records whose thread has exited. */
    int owner_tid;
    struct qa_thread *retired_next;
    /* records/stats.c: a new owner's first counted call: live_at_publish waits at
     * QA_LIVE_NEVER_PUBLISHED for it, and the record's published live bytes wait here. */
    int64_t live_resume;
    uint64_t allocs_before_owner; /* the record's allocations when its owner took it */
    bool owner_allocated;         /* the owner is counted in totals.threads */
    /* records/stacks.c: the loader calls (libunwind's stack walk, dlopen, dlclose) the thread
     * is inside: fork waits for every other thread's count to drop to zero. */
    _Atomic int unwinding;
    /* ... and the stacks its owner took with libgcc's unwinder, and whether the owner holds one
     * of the slots for libunwind's per-thread frame cache (256 KiB each). */
    uint32_t libgcc_stacks;
    bool fast_unwinder;
    bool record_counted; /* records/stats.c: the record has published live bytes */
    uint64_t sample_rng; /* records/sampling.c's random stream */
    /* output/looks.c: when the thread last looked (CLOCK_MONOTONIC), the allocations it
     * counted down to that look, and its looks so far (up to LOOK_EACH_FIRST). */
    uint64_t look_ns;
    uint32_t look_step, looks;
    /* records/sites.c: the thread's recent stacks and their sites (last: its pages are touched
     * only when stacks are taken). */
    struct qa_stack_memo stack_memo[QA_STACK_MEMO];
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
    QA_GATE_FULL = 4,     /* the settings need more than counting, for every call */
    QA_GATE_FORKED = 8,   /* a forked child: its blocks are marked in the own-block map */
    /* The thread's next allocation call looks whether to start the image's lazy writer thread
     * and, while none runs, whether a timeline point is due (output/looks.c): set every so many
     * counted allocations (look_left, records/counting.h). Beside QA_GATE_FORKED too: the look
     * takes it off first. */
    QA_GATE_LOOK = 16,
    /* The gate of base/globals.c's qa_unregistered, the record a thread's TLS pointer names until
     * it registers: one test of the gate sends such a thread to the slow path. */
    QA_GATE_UNREGISTERED = 32
};

/* ---- base/usable.c ---- */
struct qa_usable_probe {
    void *(*malloc_fn)(size_t);
    void *(*memalign_fn)(size_t, size_t);
    void (*free_fn)(void *);
    size_t (*usable_size_fn)(void *);
};

/* ---- records/blocks.c ---- */
struct qa_block {
    uintptr_t ptr;
    uint64_t size;
    uint32_t site; /* 0: none */
    uint16_t flags;
    uint16_t generation; /* qa_fork_generation when recorded: older ones were inherited */
};
enum { QA_BLOCK_POISONED = 1, QA_BLOCK_QUEUE = 2 };

/* ---- records/inherited.c ---- */
struct qa_inherited {
    int64_t blocks, bytes; /* live at the fork: the parent's own and what it still inherited */
    int64_t parent_peak;   /* the parent's peak live bytes at the fork (memory.c's check) */
    int32_t parent_pid;
    uint64_t parent_start_ns;
    /* qaudit attach (host/attach.c): when counting started in a process that ran without the
     * preload (0: it started under it). What was allocated before is unknown: its frees are
     * counted as they come (a forked child of it inherits the same unknown). */
    uint64_t attached_at_ns;
    /* GOT entries of the malloc family the attach found holding neither the program's allocator
     * nor a lazy PLT stub (another tool's hook): left alone, their calls are not counted. */
    uint64_t entries_left_alone;
};

/* ---- records/sites.c ---- */
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

/* ---- records/modules.c ---- */
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

/* ---- output/dump.c and output/dump_file.c ---- */
enum qa_dump_reason {
    QA_DUMP_EXIT,     /* exit() or return from main: the destructor */
    QA_DUMP_SIGNAL,   /* QAUDIT_SIGNAL */
    QA_DUMP_INTERVAL, /* QAUDIT_INTERVAL */
    QA_DUMP_REQUEST,  /* before QAUDIT_ASSERT_DEPTH1=abort aborts */
    QA_DUMP_EXIT_NOW, /* _exit, _Exit */
    QA_DUMP_EXEC,     /* just before execve replaces the image */
    QA_DUMP_FATAL,    /* a signal about to end the process */
    QA_DUMP_SNAPSHOT, /* `qaudit snapshot`'s request in the control record */
    QA_DUMP_DETACH    /* `qaudit detach`: the last dump before the interposer goes inert */
};
enum qa_dump_file_result { QA_DUMP_FILE_PLACED, QA_DUMP_FILE_NOT_WRITTEN, QA_DUMP_FILE_NOT_PLACED };
/* EXEC: an image's last dump before execve, named apart so that the image after it (the program
 * a shim or a script exec'd) takes the plain name (output/dump_file.c). */
enum qa_dump_kind {
    QA_DUMP_KIND_FINAL,
    QA_DUMP_KIND_EXEC,
    QA_DUMP_KIND_SNAPSHOT,
    QA_DUMP_KIND_INTERVAL
};

/* ---- base/private_fd.c, base/log.c, base/json.c ---- */
struct qa_file {
    int fd;
    dev_t dev;
    ino_t ino;
};
struct qa_sigpipe {
    sigset_t pipe_only, saved;
    bool was_pending;
};
struct qa_json {
    char *buf; /* mmap'd; NULL until the first byte */
    size_t len, capacity;
    bool failed, need_comma;
};

#endif
