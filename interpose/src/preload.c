/* libqaudit-preload.so's entry points: the malloc family, forwarded to the next allocator in
 * link order and counted on the way. Safe before initialisation (a static bootstrap arena serves
 * dlsym's own allocations), re-entrant (a per-thread guard forwards whatever the interposer or
 * libunwind allocate), and free of global locks on the hot path. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "state.h"

atomic_int qa_ready;
bool qa_fast_path;

struct real_allocator {
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
static struct real_allocator real;

/* dlsym may allocate (dlerror's buffer) before real.malloc is known: those blocks come from here,
 * each with its size in front, and are recognised by address when freed. */
static _Alignas(64) char bootstrap[256 * 1024];
static atomic_size_t bootstrap_used;

static bool in_bootstrap(const void *p)
{
    /* One unsigned comparison: addresses below the arena wrap around to huge offsets. */
    return (uintptr_t)p - (uintptr_t)bootstrap < sizeof bootstrap;
}

static void *bootstrap_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    size_t start = atomic_load(&bootstrap_used), next, data;
    do {
        data = (start + 16 + align - 1) & ~(align - 1);
        next = data + size;
        if (next > sizeof bootstrap)
            return NULL;
    } while (!atomic_compare_exchange_weak(&bootstrap_used, &start, next));
    memcpy(bootstrap + data - sizeof(size_t), &size, sizeof size);
    return bootstrap + data;
}

static size_t bootstrap_size(const void *p)
{
    size_t size;
    memcpy(&size, (const char *)p - sizeof size, sizeof size);
    return size;
}

static __thread struct qa_thread *tls_self __attribute__((tls_model("initial-exec")));

/* Inlined into the slow paths, which call it for every allocation. */
static inline struct qa_thread *self(void)
{
    if (__builtin_expect(tls_self == NULL, 0))
        tls_self = qa_thread_register();
    return tls_self;
}

struct qa_thread *qa_self(void)
{
    return self();
}

struct qa_thread *qa_self_if_registered(void)
{
    return tls_self;
}

void *qa_mmap(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t qa_now_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

uint64_t qa_monotonic_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/* A program whose stderr is a closed pipe must not be killed by a line of ours. */
static void write_stderr(const char *line, size_t n)
{
    struct qa_sigpipe guard;
    qa_sigpipe_block(&guard);
    ssize_t written = write(STDERR_FILENO, line, n);
    qa_sigpipe_restore(&guard, written < 0 && errno == EPIPE);
}

/* One line on stderr, formatted without malloc (vsnprintf into a stack buffer). */
void qa_log(const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof line, "qaudit: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    int saved = errno;
    write_stderr(line, (size_t)n);
    errno = saved;
}

static void *next_symbol(const char *name)
{
    void *sym = dlsym(RTLD_NEXT, name);
    return sym;
}

/* Resolves the next allocator and loads the configuration; runs once, on the first call. */
static void initialise(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&qa_ready, &expected, 1))
        return;
    real.malloc = next_symbol("malloc");
    real.free = next_symbol("free");
    real.calloc = next_symbol("calloc");
    real.realloc = next_symbol("realloc");
    real.reallocarray = next_symbol("reallocarray");
    real.posix_memalign = next_symbol("posix_memalign");
    real.aligned_alloc = next_symbol("aligned_alloc");
    real.memalign = next_symbol("memalign");
    real.valloc = next_symbol("valloc");
    real.pvalloc = next_symbol("pvalloc");
    real.malloc_usable_size = next_symbol("malloc_usable_size");
    if (real.malloc == NULL || real.free == NULL || real.calloc == NULL || real.realloc == NULL) {
        qa_log("cannot find the next allocator; counting nothing");
        return; /* stays at 1: everything is served by the bootstrap arena or fails */
    }
    struct qa_usable_probe probe = {real.malloc, real.memalign, real.free, real.malloc_usable_size};
    qa_usable_choose(&probe);
    qa_config_load();
    qa_sampling_init(); /* before any thread registers: records seed their streams from it */
    qa_exits_resolve();
    qa_chroot_resolve();
    qa_unwinder_fds_init();
    qa_blocks_init();
    qa_threads_init(); /* before any thread registers: the key that retires its record */
    /* Before any thread registers: each starts with its gate set from this. */
    bool stacks_rare = qa_cfg.stacks == QA_STACKS_OFF ||
                       ((qa_cfg.stacks == QA_STACKS_SAMPLED || qa_cfg.stacks == QA_STACKS_QUEUE) &&
                        qa_cfg.sites[0] == '\0');
    qa_fast_path = stacks_rare && qa_cfg.poison == QA_POISON_OFF &&
                   qa_cfg.fail_mode == QA_FAIL_NONE && qa_usable_from_header;
    qa_unseen_start(); /* before counting starts: anonymous memory and allocators at start-up */
    atomic_store_explicit(&qa_ready, 2, memory_order_release);
    struct qa_thread *t = qa_self();
    if (t) {
        bool was_busy = qa_guard(t);
        qa_config_export();
        qa_patterns_resolve();
        qa_writer_start();
        qa_guard_restore(t, was_busy);
    }
}

__attribute__((constructor)) static void qa_constructor(void)
{
    initialise();
}

static bool ready(void)
{
    if (__builtin_expect(atomic_load_explicit(&qa_ready, memory_order_acquire) == 2, 1))
        return true;
    initialise();
    return atomic_load_explicit(&qa_ready, memory_order_acquire) == 2;
}

/* The thread to count for, or NULL when this call must only be forwarded. */
static struct qa_thread *enter(void)
{
    struct qa_thread *t = self();
    if (t == NULL || qa_guard(t))
        return NULL;
    return t;
}

static void leave(struct qa_thread *t)
{
    qa_guard_restore(t, false);
}

size_t qa_real_usable_size(void *p)
{
    return real.malloc_usable_size ? real.malloc_usable_size(p) : 0;
}

/* Stacks sampled:N: whether this allocation is the thread's Nth since the last sample (or takes
 * its bytes past N since then). Every allocation of the thread passes here exactly once, on the
 * fast path or the slow one. */
static inline bool sample_due(struct qa_thread *t, size_t size)
{
    t->sample_left -= qa_cfg.sample_by_bytes ? (int64_t)size : 1;
    if (__builtin_expect(t->sample_left > 0, 1))
        return false;
    t->sample_left = qa_sample_interval(t); /* drawn afresh: the intervals are memoryless */
    return true;
}

static bool wants_stack(struct qa_thread *t, size_t size, bool in_queue)
{
    switch (qa_cfg.stacks) {
    case QA_STACKS_ALWAYS:
    case QA_STACKS_FP:
        return true;
    case QA_STACKS_QUEUE:
        return in_queue || qa_patterns_active();
    case QA_STACKS_SAMPLED:
        return sample_due(t, size);
    default:
        return false;
    }
}

/* The totals of a new block. They call nothing, so the fast path runs them without the
 * re-entrancy guard; it reads usable sizes from glibc's headers (gates are shut otherwise). */
static inline void count_new_block(struct qa_thread *t, void *p, size_t size, size_t usable,
                                   enum qa_call call)
{
    struct qa_counters *c = &t->c;
    t->last_alloc = (uintptr_t)p;
    if (__builtin_expect(qa_owned_tracking, 0))
        qa_owned_mark(p);
    c->by_call[call]++;
    c->bytes_requested += size;
    c->bytes_usable += usable;
    qa_size_hist_add(t, size);
    qa_usable_hist_add(t, usable);
    qa_live_grew(t);
}

/* The totals of a block about to be freed (the same guarantee as above); whether it was
 * temporary: the thread's last new block. */
static inline bool count_freed_block(struct qa_thread *t, void *p, size_t usable)
{
    bool temporary = t->last_alloc == (uintptr_t)p;
    if (__builtin_expect(temporary, 0)) {
        t->c.temporary++;
        t->last_alloc = 0;
    }
    t->c.by_call[QA_FREE]++;
    t->c.bytes_freed_usable += usable;
    if (__builtin_expect(qa_owned_tracking, 0) && !qa_owned_take(p)) {
        t->c.inherited_freed++; /* a forked child's free of a block from before its fork */
        t->c.inherited_freed_bytes += usable;
    }
    qa_live_shrank(t);
    return temporary;
}

/* What a counted block p needs beyond its totals: its stack and site when with_stack, its queue
 * attribution, poison, and its record for free(). frames/depth hold a stack already captured
 * (depth >= 0). Inlined into each entry point for the reason given at qa_capture. */
__attribute__((always_inline)) static inline void
record_site_and_block(struct qa_thread *t, void *p, size_t size, enum qa_call call, bool in_queue,
                      bool with_stack, void **frames, int depth)
{
    uint32_t site = 0;
    if (with_stack) {
        if (depth < 0)
            depth = qa_capture(frames, qa_cfg.depth, qa_cfg.stacks == QA_STACKS_FP);
        bool keep =
            qa_cfg.stacks != QA_STACKS_QUEUE || in_queue || qa_frames_match_patterns(frames, depth);
        if (keep) {
            site = qa_site_for(frames, depth);
            qa_site_alloc(t, site, size, in_queue);
        }
    }
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
__attribute__((always_inline)) static inline void
record_alloc(struct qa_thread *t, void *p, size_t size, enum qa_call call, void **frames, int depth)
{
    count_new_block(t, p, size, qa_usable_size(p), call);
    bool in_queue = qa_queue_in_op(t);
    bool with_stack = wants_stack(t, size, in_queue);
    record_site_and_block(t, p, size, call, in_queue, with_stack, frames, depth);
}

/* A sampled malloc met on the fast path, already counted: its stack, site and block record, under
 * the guard (libunwind may allocate). Out of line, as one allocation in N comes here; its own
 * frame and malloc's are the interposer's and are skipped in the stack. */
__attribute__((noinline)) static void record_sampled(struct qa_thread *t, void *p, size_t size)
{
    qa_guard(t);
    void *frames[QA_MAX_DEPTH];
    record_site_and_block(t, p, size, QA_MALLOC, false, true, frames, -1);
    qa_guard_restore(t, false);
}

static void record_free(struct qa_thread *t, void *p)
{
    bool temporary = count_freed_block(t, p, qa_usable_size(p));
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

/* The fault injector's verdict for a new allocation; captures the stack when it needs one. */
static bool fail_now(struct qa_thread *t, size_t size, void **frames, int *depth)
{
    if (qa_cfg.fail_mode == QA_FAIL_NONE)
        return false;
    if (!qa_fault_should_fail(t, size, frames, depth))
        return false;
    t->c.failed++;
    return true;
}

/* The thread, when this call may take the fast path. A thread is registered only once the
 * interposer is ready, so a registered thread needs no readiness check. */
static inline struct qa_thread *fast_thread(void)
{
    struct qa_thread *t = tls_self;
    if (__builtin_expect(t == NULL || t->gate != 0, 0))
        return NULL;
    return t;
}

/* Everything but the fast path, out of line so that the fast path's frame stays small. */
__attribute__((noinline)) static void *malloc_slow(size_t size)
{
    if (!ready())
        return bootstrap_alloc(size, 16);
    struct qa_thread *t = enter();
    if (t == NULL)
        return real.malloc(size);
    void *frames[QA_MAX_DEPTH];
    int depth = -1;
    void *p = NULL;
    if (fail_now(t, size, frames, &depth))
        errno = ENOMEM;
    else if ((p = real.malloc(size)) != NULL)
        record_alloc(t, p, size, QA_MALLOC, frames, depth);
    leave(t);
    return p;
}

QA_EXPORT void *malloc(size_t size)
{
    struct qa_thread *t = fast_thread();
    if (t == NULL)
        return malloc_slow(size);
    void *p = real.malloc(size);
    if (p != NULL) {
        count_new_block(t, p, size, qa_glibc_chunk_usable(p), QA_MALLOC);
        if (qa_cfg.stacks == QA_STACKS_SAMPLED && sample_due(t, size))
            record_sampled(t, p, size);
    }
    return p;
}

__attribute__((noinline)) static void free_slow(void *p)
{
    if (in_bootstrap(p))
        return;
    if (!ready())
        return; /* cannot happen with a real block: it came from the allocator we resolve */
    struct qa_thread *t = enter();
    if (t == NULL) {
        real.free(p);
        return;
    }
    record_free(t, p);
    real.free(p);
    leave(t);
}

QA_EXPORT void free(void *p)
{
    if (p == NULL)
        return;
    struct qa_thread *t = fast_thread();
    if (t == NULL || in_bootstrap(p) || qa_blocks_may_hold((uintptr_t)p)) {
        free_slow(p);
        return;
    }
    count_freed_block(t, p, qa_glibc_chunk_usable(p));
    real.free(p);
}

QA_EXPORT void *calloc(size_t n, size_t size)
{
    if (!ready()) {
        size_t bytes;
        if (__builtin_mul_overflow(n, size, &bytes))
            return NULL;
        return bootstrap_alloc(bytes, 16); /* static storage: already zero */
    }
    struct qa_thread *t = enter();
    if (t == NULL)
        return real.calloc(n, size);
    size_t bytes = 0;
    bool overflow = __builtin_mul_overflow(n, size, &bytes);
    void *frames[QA_MAX_DEPTH];
    int depth = -1;
    void *p = NULL;
    if (!overflow && fail_now(t, bytes, frames, &depth))
        errno = ENOMEM;
    else if ((p = real.calloc(n, size)) != NULL)
        record_alloc(t, p, bytes, QA_CALLOC, frames, depth);
    leave(t);
    return p;
}

/* Stacks sampled: a resize is an allocation of its new size to the sampler like any other, drawn
 * whether or not the old block was sampled (so the figures stay unbiased), and attributed to the
 * resize's own stack. kept: the old block's record, already taken from its site, or NULL. */
static void resample_resized(struct qa_thread *t, void *p, size_t size, struct qa_block *kept,
                             void **frames, int depth)
{
    uint16_t flags = kept ? kept->flags : 0;
    if (!sample_due(t, size)) {
        if (flags & QA_BLOCK_POISONED) /* poison still counts at its free */
            qa_blocks_insert(&(struct qa_block){(uintptr_t)p, size, 0, flags, qa_fork_generation});
        return;
    }
    if (depth < 0)
        depth = qa_capture(frames, qa_cfg.depth, false);
    uint32_t site = qa_site_for(frames, depth);
    qa_site_alloc(t, site, size, false);
    if (qa_blocks_enabled)
        qa_blocks_insert(&(struct qa_block){(uintptr_t)p, size, site, flags, qa_fork_generation});
}

/* A resize of a live block, done by forward(args) (realloc, or another allocator's own entry
 * point): counted as one realloc (in place or moved), the old block's record replaced by the new
 * one. zeroed: the bytes past the old size are zero, so poison must leave them. */
static void *counted_resize(struct qa_thread *t, void *old, size_t size, enum qa_call call,
                            bool zeroed, qa_forward_fn forward, void *args)
{
    void *frames[QA_MAX_DEPTH];
    int depth = -1;
    if (fail_now(t, size, frames, &depth)) {
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
    c->reallocs++;
    c->by_call[call]++;
    c->bytes_requested += size;
    if (p == old)
        c->realloc_in_place++;
    else
        c->realloc_moved++;
    size_t usable = qa_usable_size(p);
    c->bytes_usable += usable;
    c->bytes_freed_usable += old_usable;
    if (old_inherited) { /* the new block is the child's own: see qa_counters_own_frees */
        c->inherited_reallocated++;
        c->inherited_freed_bytes += old_usable;
    }
    if (qa_owned_tracking)
        qa_owned_mark(p);
    qa_size_hist_add(t, size);
    qa_usable_hist_add(t, usable);
    qa_live_grew(t);
    t->last_alloc = (uintptr_t)p; /* the thread's newest block, as after a malloc */
    if (known) {
        if (before.generation != qa_fork_generation)
            qa_site_free_inherited(t, before.site, before.size);
        else
            qa_site_free(t, before.site, before.size, 0, false);
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

struct realloc_args {
    void *old;
    size_t size;
};

static void *forward_realloc(void *args)
{
    struct realloc_args *a = args;
    return real.realloc(a->old, a->size);
}

/* realloc of a live block. realloc(NULL, n) is an allocation, realloc(p, 0) a free. */
static void *counted_realloc(struct qa_thread *t, void *old, size_t size, enum qa_call call)
{
    struct realloc_args args = {old, size};
    return counted_resize(t, old, size, call, false, forward_realloc, &args);
}

QA_EXPORT void *realloc(void *old, size_t size)
{
    if (old != NULL && in_bootstrap(old)) {
        void *p = malloc(size);
        if (p != NULL) {
            size_t keep = bootstrap_size(old);
            memcpy(p, old, keep < size ? keep : size);
        }
        return p;
    }
    if (old == NULL)
        return malloc(size);
    if (!ready())
        return NULL;
    if (size == 0) {
        free(old);
        return NULL;
    }
    struct qa_thread *t = enter();
    if (t == NULL)
        return real.realloc(old, size);
    void *p = counted_realloc(t, old, size, QA_REALLOC);
    leave(t);
    return p;
}

QA_EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    if (old == NULL || size == 0 || n == 0 || in_bootstrap(old) || !ready())
        return realloc(old, bytes);
    struct qa_thread *t = enter();
    if (t == NULL)
        return real.realloc(old, bytes);
    void *p = counted_realloc(t, old, bytes, QA_REALLOCARRAY);
    leave(t);
    return p;
}

static void *real_aligned(enum qa_call call, size_t align, size_t size, int *error)
{
    void *p = NULL;
    switch (call) {
    case QA_POSIX_MEMALIGN:
        *error = real.posix_memalign(&p, align, size);
        return *error ? NULL : p;
    case QA_ALIGNED_ALLOC:
        return real.aligned_alloc(align, size);
    case QA_MEMALIGN:
        return real.memalign(align, size);
    case QA_VALLOC:
        return real.valloc(size);
    default:
        return real.pvalloc(size);
    }
}

/* The aligned family shares one path; glibc's own checks (alignment a power of two, etc.) stay
 * with glibc: the interposer forwards and counts what succeeds. */
static void *aligned(enum qa_call call, size_t align, size_t size, int *error)
{
    if (!ready())
        return bootstrap_alloc(size, align < 4096 ? align : 4096);
    struct qa_thread *t = enter();
    if (t == NULL)
        return real_aligned(call, align, size, error);
    void *frames[QA_MAX_DEPTH];
    int depth = -1;
    void *p = NULL;
    if (fail_now(t, size, frames, &depth))
        *error = ENOMEM;
    else if ((p = real_aligned(call, align, size, error)) != NULL)
        record_alloc(t, p, size, call, frames, depth);
    leave(t);
    return p;
}

QA_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    int error = 0;
    void *p = aligned(QA_POSIX_MEMALIGN, align, size, &error);
    if (p != NULL)
        *out = p;
    return p != NULL ? 0 : (error ? error : ENOMEM);
}

QA_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    int error = 0;
    void *p = aligned(QA_ALIGNED_ALLOC, align, size, &error);
    if (p == NULL && error)
        errno = error;
    return p;
}

QA_EXPORT void *memalign(size_t align, size_t size)
{
    int error = 0;
    return aligned(QA_MEMALIGN, align, size, &error);
}

QA_EXPORT void *valloc(size_t size)
{
    int error = 0;
    return aligned(QA_VALLOC, 4096, size, &error);
}

QA_EXPORT void *pvalloc(size_t size)
{
    int error = 0;
    return aligned(QA_PVALLOC, 4096, size, &error);
}

QA_EXPORT size_t malloc_usable_size(void *p)
{
    if (p == NULL)
        return 0;
    if (in_bootstrap(p))
        return bootstrap_size(p);
    return ready() ? real.malloc_usable_size(p) : 0;
}

/* Other allocators' own entry points (mallocx, tc_malloc, mi_malloc...), reached from the
 * shims through extra.c: counted as the malloc-family call `call` by the same record functions.
 * forward(args) is the allocator's own call. *seen: whether the call was counted (it is only
 * forwarded before initialisation and under the re-entrancy guard, as the malloc family is). */

/* A shim's block: its stack is taken here with room for one more frame, and the shim's frame
 * on top is left out (extra.c knows the shims' code), so the site starts at the program's call. */
__attribute__((always_inline)) static inline void record_extra(struct qa_thread *t, void *p,
                                                               size_t size, enum qa_call call)
{
    count_new_block(t, p, size, qa_usable_size(p), call);
    bool in_queue = qa_queue_in_op(t);
    bool with_stack = wants_stack(t, size, in_queue);
    void *frames[QA_MAX_DEPTH + 1];
    int depth = -1;
    if (with_stack) {
        depth = qa_capture(frames, qa_cfg.depth + 1, qa_cfg.stacks == QA_STACKS_FP);
        depth = qa_extra_strip(frames, depth, (int)qa_cfg.depth);
    }
    record_site_and_block(t, p, size, call, in_queue, with_stack, frames, depth);
}

void *qa_extra_alloc(enum qa_call call, size_t size, bool may_fail, qa_forward_fn forward,
                     void *args, bool *seen)
{
    struct qa_thread *t = ready() ? enter() : NULL;
    *seen = t != NULL;
    if (t == NULL)
        return forward(args);
    void *frames[QA_MAX_DEPTH];
    int depth = -1;
    void *p = NULL;
    if (may_fail && fail_now(t, size, frames, &depth))
        errno = ENOMEM;
    else if ((p = forward(args)) != NULL)
        record_extra(t, p, size, call);
    leave(t);
    return p;
}

void qa_extra_free(void *p, qa_forward_fn forward, void *args, bool *seen)
{
    *seen = false;
    if (in_bootstrap(p))
        return; /* the bootstrap arena's, never the allocator's */
    struct qa_thread *t = ready() ? enter() : NULL;
    if (t != NULL) {
        *seen = true;
        record_free(t, p);
    }
    if (forward != NULL)
        forward(args);
    if (t != NULL)
        leave(t);
}

void *qa_extra_resize(enum qa_call call, void *old, size_t size, bool zeroed, qa_forward_fn forward,
                      void *args, bool *seen)
{
    *seen = false;
    if (in_bootstrap(old)) {
        errno = ENOMEM; /* the bootstrap arena's: the allocator cannot resize it */
        return NULL;
    }
    struct qa_thread *t = ready() ? enter() : NULL;
    if (t == NULL)
        return forward(args);
    *seen = true;
    void *p = counted_resize(t, old, size, call, zeroed, forward, args);
    leave(t);
    return p;
}
