/* The interposer's records: what it counts and keeps about the program's calls. Counters and
 * histograms (totals.c, stats.c, with the fast path's inline functions in counting.h), sampling,
 * stacks and the sites they identify, site patterns, the live-block table, queue records, injected
 * failures and poison, memory over time, a forked child's inheritance and own-block map, the
 * module map, anonymous memory and other allocators (what stays unseen), and the record paths
 * the entry points take (recording.h, recording.c). Calls only base/, and output/'s qa_dump
 * once (queues.c: the dump before an abort on a depth-one violation). Files: the .c files of
 * records/.
 * Context: each function's own file says where it runs and what is forbidden there. */
#ifndef QAUDIT_RECORDS_H
#define QAUDIT_RECORDS_H

#include <link.h>

#include "../base/self.h"
#include "../extra_abi.h"

/* ---- totals.c: the process's totals (below the files that read them and stats.c, which
 * publishes into them). Context: publishing on the fast path's rare branches (any thread, no
 * lock); the sums on dumps, timeline points and forks. ---- */
/* A record publishes its live bytes to the shared total when they have moved QA_LIVE_BATCH since
 * it last did, and on its owner's first counted call, to count the thread (live_at_publish
 * starts far out of range, and publish_up and publish_down at -1: counting.h, stats.c). */
#define QA_LIVE_BATCH (64 * 1024)
#define QA_LIVE_NEVER_PUBLISHED (INT64_MIN / 4)
extern struct qa_inherited qa_inherited; /* filled by inherited.c at a fork and an attach */
void qa_sum_counters(struct qa_counters *out, uint64_t *threads);
int64_t qa_live_bytes_total(const struct qa_counters *c);  /* inheritance included */
int64_t qa_live_blocks_total(const struct qa_counters *c); /* inheritance included */
void qa_totals_count_thread(void);                         /* an owner's first counted allocation */
void qa_totals_count_record(void);                         /* a record's first publication */
int64_t qa_totals_publish(int64_t delta);                  /* the total after it */
void qa_totals_reset(void);      /* a new account: from qa_inherited.bytes */
int64_t qa_live_published(void); /* the batched total, as the last publication left it */
int64_t qa_peak_live(void);
void qa_peak_observe(int64_t live);
uint64_t qa_thread_total(void); /* thread records that counted: a bound on threads alive at once */

/* ---- stats.c: live and peak bytes published in batches, histograms, resets of the counts.
 * Context: qa_live_publish and qa_usable_hist_add_slow on the fast path's rare branches; the
 * rest on dumps and forks. ---- */
void qa_live_new_owner(struct qa_thread *t);
size_t qa_usable_hist_add_slow(struct qa_thread *t, size_t usable); /* returns usable */
struct qa_usable_class {
    size_t usable;
    uint64_t count;
};
size_t qa_usable_hist(struct qa_usable_class *classes, size_t max); /* by size, up to max */
uint64_t qa_usable_overflow(void);
void qa_live_publish(struct qa_thread *t, int64_t live);
/* The fast path's rare branches (counting.h): the record's live bytes rose past its peak
 * (below_peak went negative), or moved a batch since the last publication. */
/* qa_live_new_peak returns usable, the caller's to use after it: so the caller keeps it in no
 * register and no stack slot across the call (the fast path's frame stays empty). */
__attribute__((noinline, cold)) size_t qa_live_new_peak(struct qa_thread *t, size_t usable);
__attribute__((noinline, cold)) void qa_live_publish_own(struct qa_thread *t);
void qa_stats_reset_after_fork(void);
void qa_stats_reset_for_attach(void); /* a second attach: every record's counts from zero */
size_t qa_size_bucket_floor(unsigned bucket);

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

/* A record's own live bytes (counting.h keeps them as their distance below its peak). */
static inline int64_t qa_thread_live_bytes(const struct qa_thread *t)
{
    return t->peak_usable - t->below_peak;
}

/* realloc neither adds nor removes a block. */
static inline int64_t qa_counters_live_blocks(const struct qa_counters *c)
{
    return (int64_t)(qa_counters_allocs(c) - c->by_call[QA_FREE]);
}

/* Frees of blocks this image allocated itself: in a forked child, free() calls less those of
 * inherited blocks. */
static inline uint64_t qa_counters_own_frees(const struct qa_counters *c)
{
    return c->by_call[QA_FREE] - c->inherited_freed;
}

/* 16-byte steps up to 512 (32 buckets), then one bucket per power of two. Branch-free: requested
 * sizes are as random as the program's, and a mispredicted branch here costs more than the rest
 * of the counting. */
QA_CTX_FAST static inline unsigned qa_size_bucket(size_t size)
{
    size_t below = size - (size != 0); /* sizes 0 and 1 both land in bucket 0 */
    unsigned linear = (unsigned)(below >> 4);
    /* 513..1024 is bucket 32: floor(log2(size - 1)) is 9 there. */
    unsigned power = 23 + (unsigned)(63 - __builtin_clzll(below | 1));
    power = power < QA_SIZE_BUCKETS ? power : QA_SIZE_BUCKETS - 1;
    unsigned small = 0u - (unsigned)(below < 512); /* a mask, so that GCC cannot branch */
    return (linear & small) | (power & ~small);
}

/* ---- blocks.c: what is known of each live block (only when stacks or poison need it).
 * Context: the slow paths; 256 spin-locked shards. ---- */
extern bool qa_blocks_enabled;
extern atomic_uint_fast64_t qa_blocks_dropped;
void qa_blocks_init(void);
bool qa_blocks_insert(const struct qa_block *b);
bool qa_blocks_remove(uintptr_t ptr, struct qa_block *out);
bool qa_blocks_may_hold(uintptr_t ptr); /* false is certain; the fast free path asks */
void qa_blocks_before_fork(void);       /* around fork */
void qa_blocks_after_fork_parent(void);
void qa_blocks_after_fork_child(void);

/* ---- owned.c: in a forked child, which live blocks it allocated itself. Context: the forked
 * child's fast path; nothing here allocates or locks (a region's first mark maps it). ---- */
extern bool qa_owned_tracking; /* true in a forked child, and after an attach */
extern atomic_uint_fast64_t qa_owned_untracked;
void qa_owned_mark(const void *block);
bool qa_owned_take(const void *block); /* false: not marked, so inherited */
void qa_owned_before_fork(void);       /* maps the table children use; at an attach too */
void qa_owned_reset_after_fork(void);

/* ---- inherited.c: what a forked child held at its fork, apart from what it does itself (the
 * figures in qa_inherited, totals.c). Context: the fork handlers; the reads on dumps. ---- */
extern uint16_t qa_fork_generation; /* 0 in the image that loaded the preload, +1 per fork */
bool qa_is_forked_child(void);
void qa_inherited_before_fork(void);
void qa_inherited_after_fork_child(void); /* before the counters are reset */
/* qaudit attach: counting starts now in a process that ran without the preload (blocks live
 * before are unknown; the own-block map tells their frees). Context: the attach, other threads
 * stopped or not yet counting. */
void qa_inherited_attach(uint64_t now_ns);
bool qa_is_attached_image(void); /* attached (or forked from an attached image) */

/* ---- sampling.c: random intervals for stacks sampled:N, and what one sample stands for ---- */
#define QA_WEIGHT_ONE 1024   /* fixed point of sampled allocation weights */
void qa_sampling_init(void); /* the process's seed: QAUDIT_SEED, or drawn */
uint64_t qa_sampling_seed(void);
void qa_sampling_before_fork(void);
void qa_sampling_after_fork_child(struct qa_thread *self);
void qa_sample_seed(struct qa_thread *t, uint64_t order);
int64_t qa_sample_interval(struct qa_thread *t);
void qa_sample_weight(uint64_t size, uint64_t *allocs, uint64_t *bytes);

/* ---- stacks.c: call stacks (libunwind, libgcc or a frame-pointer walk), the interposer's own
 * frames left out; the loader calls a fork must not split. Context: the slow path under the guard.
 */
int qa_capture(void **frames, unsigned max, bool frame_pointers);
int qa_capture_by_cfi(void **frames, unsigned max); /* under a frameless caller */
/* This library's own extent, from linker-defined symbols bound locally (hidden), so no loader
 * call is needed on the allocation path: its frames are the interposer's, never kept. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char _end[] __attribute__((visibility("hidden")));
static inline bool qa_ours(const void *ip)
{
    return (uintptr_t)ip >= (uintptr_t)__ehdr_start && (uintptr_t)ip < (uintptr_t)_end;
}
/* QAUDIT_UNWIND_CHECK=1: stacks the rules walked and the libraries walked again, those that
 * differed, and stacks the rules did not cover (docs/design.md, "Stacks in always mode"). */
extern atomic_uint_fast64_t qa_unwind_compared, qa_unwind_differed, qa_unwind_by_library;
void qa_stacks_new_owner(struct qa_thread *t);
void qa_stacks_after_fork_child(void); /* every slot for libunwind's frame cache free again */
extern atomic_uint_fast64_t qa_stacks_truncated;
void qa_loader_enter(struct qa_thread *t); /* around loader calls fork must not split */
void qa_loader_leave(struct qa_thread *t);
void qa_unwinds_block(void);   /* before fork: waits for loader calls under way, holds new ones */
void qa_unwinds_unblock(void); /* after fork, in parent and child */

/* ---- unwind_rules.c: the `always` walk over each return address's unwind rule, the rules in
 * one table shared without locks. Context: the slow path under the guard. ---- */
/* The program's frames (up to max; *truncated if there were more), or -1: a frame whose rule is
 * not known, so the stack is for the libraries. lo and hi: the thread's stack; t: the thread's
 * record (NULL: none), whose loader count a rule's first reading takes. */
int qa_rules_walk(void **frames, unsigned max, uintptr_t lo, uintptr_t hi, struct qa_thread *t,
                  bool *truncated);
void qa_rules_forget(void); /* after a dlclose: every rule learnt again */

/* ---- cfi_rule.c: one return address's rule from its FDE (x86-64). Context: the slow path,
 * loader guard held. ---- */
#define QA_RULE_CFA_RBP (1ull << 32)   /* CFA = rbp + the low 16 bits (signed); else rsp + */
#define QA_RULE_RBP_SAVED (1ull << 33) /* the caller's rbp at CFA + bits 16-31 (signed) */
#define QA_RULE_LAST (1ull << 34)      /* the return address is undefined: the outermost frame */
#define QA_RULE_UNKNOWN (1ull << 35)   /* not followed: the libraries walk this stack */
#define QA_RULE_BITS ((1ull << 36) - 1)
#define QA_RULE_VALID (1ull << 36) /* set in the table's entries (unwind_rules.c) */
uint64_t qa_cfi_rule(uintptr_t return_address);

/* ---- sites.c: the sites stacks identify, their counts (pending per thread, shared per site),
 * and a forked child's adoption of them. Context: the slow path; reads on dumps. ---- */
uint32_t qa_site_of_stack(struct qa_thread *t, void *const *frames, int depth); /* memoised */
void qa_site_alloc(struct qa_thread *t, uint32_t site, uint64_t size, bool queue);
void qa_site_free(struct qa_thread *t, uint32_t site, uint64_t size, uint64_t never_written,
                  bool temporary);
void qa_site_free_inherited(struct qa_thread *t, uint32_t site, uint64_t size);
uint32_t qa_site_count(void);
bool qa_site_get(uint32_t id, struct qa_site_view *out);
void qa_sites_flush_all(void);   /* a forked child's pending counts are its parent's */
void qa_sites_before_fork(void); /* the forking thread's pending counts, in the parent */
uint64_t qa_never_written_unattributed(void);
extern atomic_uint_fast64_t qa_sites_dropped;

/* ---- patterns.c: QAUDIT_QUEUE_SITES and QAUDIT_FAIL's site= resolved to address ranges from
 * the modules' symbol tables. Context: start-up and after each dlopen (never under a lock of
 * ours while the loader's is wanted); matching on the slow path. ---- */
enum { QA_PATTERNS_QUEUE = 1, QA_PATTERNS_FAIL = 2 };
bool qa_frames_match(void *const *frames, int depth, unsigned set);
bool qa_frames_match_patterns(void *const *frames, int depth);
void qa_patterns_resolve(void);
bool qa_patterns_active(void);
void qa_patterns_hold(void); /* around fork */
void qa_patterns_release(void);
size_t qa_pattern_ranges(void);

/* ---- queues.c: the hook consumer (records, attribution, checks). Context: the program's
 * threads through qaudit_hook (entry/hooks.c), and the slow path's attribution. ---- */
struct qaudit_event;
void qa_queue_event(const struct qaudit_event *ev);
void qa_queue_on_alloc(struct qa_thread *t, uint64_t size, void *const *frames, int depth);
bool qa_queue_in_op(const struct qa_thread *t);
void qa_queue_new_owner(struct qa_thread *t);
void qa_queue_write(struct qa_json *j);
QA_CTX_SIGNAL_SAFE void qa_queue_write_checks(struct qa_json *j, bool final); /* final: last dump */
void qa_queue_reset_after_fork(void);
void qa_queue_before_abort(void (*dump)(void)); /* what runs before a depth-one abort */

/* ---- faults.c: injected failures and poison ---- */
bool qa_fault_should_fail(struct qa_thread *t, size_t size, void **frames, int *depth);
void qa_fault_write(struct qa_json *j);
void qa_poison_fill(void *p, size_t size);
uint64_t qa_poison_count(const void *p, size_t size);

/* ---- timeline.c: memory over time, a bounded series the writer thread fills ---- */
void qa_timeline_start(uint64_t forked_ns); /* 0: the image that loaded the preload */
bool qa_timeline_on(void);
uint64_t qa_timeline_due(void);
void qa_timeline_take(void);
/* From records/stats.c as t's live bytes move (live: the total); a large move wakes the writer
 * through wake (set once it can be woken), and sets what qa_timeline_move_wanted reads once. */
void qa_timeline_moved(struct qa_thread *t, int64_t live, bool writer_waiting);
/* A thread's look while the writer waits (output/looks.c): the period's point when due (now:
 * CLOCK_MONOTONIC). */
void qa_timeline_point_if_due(struct qa_thread *t, uint64_t now);
void qa_timeline_wake_with(void (*wake)(void));
bool qa_timeline_move_wanted(void);
void qa_timeline_write(struct qa_json *j, uint64_t now_ns);

/* ---- modules.c: the loaded objects, for symbolizing frames later. Context: gathered at
 * start-up, after dlopen/dlclose and by ordinary dumps; read by any dump. ---- */
void qa_modules_changed(void);
const struct qa_module_list *qa_modules_hold_fresh(void); /* then qa_modules_release */
const struct qa_module_list *qa_modules_current(void);
void qa_modules_hold(void);
void qa_modules_release(void);

/* ---- memory.c: anonymous memory at start-up and at each dump, and the resident set ---- */
void qa_memory_start(void);
bool qa_memory_write(struct qa_json *j); /* false: growth the counted bytes do not explain */
uint64_t qa_resident_bytes(void);        /* from /proc/self/statm; 0 when unreadable */
void qa_memory_dump_begin(void); /* one statm reading for the dump being written (dump lock) */
void qa_memory_dump_end(void);

/* ---- shim_calls.c: each shim entry point's calls, and the shims' code (frames left out of
 * stacks). Context: the shims' calls (entry/shims.c), any thread. ---- */
void qa_shim_tally(unsigned family, unsigned entry);
uint64_t qa_extra_calls(unsigned family, unsigned entry);
void qa_extra_reset_after_fork(void);
void qa_extra_add_shim_code(uintptr_t lo, uintptr_t hi);
int qa_extra_strip(void **frames, int depth, int max);
extern const char *const qa_extra_entry_names[QAUDIT_FAMILIES][QAUDIT_MAX_ENTRIES];
extern const unsigned qa_extra_entry_count[QAUDIT_FAMILIES];

/* ---- loaded_symbols.c: whether a loaded object defines a dynamic symbol (its hash table in
 * memory, not dlsym, which would leave an error message for the program's dlerror to free) */
bool qa_object_defines(const struct dl_phdr_info *info, const char *name);
void qa_object_path(const struct dl_phdr_info *info, char *out, size_t size); /* exe's: no name */

/* ---- allocators.c: the allocator families loaded at start-up, and whether a shim interposes
 * each; unseen.c: start-up and the dump's fields for what stays invisible ---- */
void qa_allocators_detect(bool attached); /* attached: said by qaudit attach, not on stderr */
/* qaudit attach, at each scan of the modules' relocations (the attach, a module loaded since):
 * begin, then each symbol a module binds (value: its GOT entry; unresolved: a lazy entry still
 * in its module) that the attach does not redirect. */
void qa_allocators_bindings_begin(void);
void qa_allocators_binding(const char *module, const char *symbol, uintptr_t value,
                           bool unresolved);
/* What of family f an attach does not reach, in a sentence; false when f is not present or is
 * interposed. */
bool qa_allocators_unreached(unsigned f, char *out, size_t size);
bool qa_allocators_write(struct qa_json *j); /* false: one is present but not interposed */
void qa_unreachable_detect(bool attached);   /* unreachable.c: the executable's own malloc, je_ */
bool qa_unreachable_text(unsigned i, char *out, size_t size); /* the i-th, for qaudit attach */
bool qa_unreachable_write(struct qa_json *j); /* false: an allocator no interposing reaches */
void qa_unseen_start(bool attached);
bool qa_unseen_write(struct qa_json *j); /* false: something was not seen (precision.exact) */

/* ---- recording.c: what a counted call records beyond the fast path's counts (the inline
 * parts the entry points share are in recording.h). Context: the slow path, under the guard. */
typedef void *(*qa_forward_fn)(void *args);
void qa_record_sampled(struct qa_thread *t, void *p, size_t size);
void *qa_counted_resize(struct qa_thread *t, void *old, size_t size, enum qa_call call, bool zeroed,
                        qa_forward_fn forward, void *args);
void qa_records_new_record(struct qa_thread *t, uint64_t order);
void qa_records_new_owner(struct qa_thread *t);

#endif
