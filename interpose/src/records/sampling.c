/* Stacks sampled:N and sampled:Nb: random sampling intervals and the weight of one sample.
 * Intervals are drawn, not fixed, so a program whose allocations repeat with a period (a loop of
 * 16 allocations under sampled:16) cannot hide its other sites: by count each allocation is
 * sampled with probability 1/N (geometric intervals), by bytes each byte with probability 1/N
 * (exponential intervals, as tcmalloc and jemalloc sample), so an allocation of s bytes is sampled
 * with probability 1 - e^(-s/N) and one sample stands for 1 / (1 - e^(-s/N)) allocations.
 * Context: the due check is inline on the fast path (counting.h); a new interval is drawn
 * out of line on the allocating thread, with no lock; the fork handlers reseed. */
#include <dlfcn.h>
#include <math.h>
#include <sys/random.h>
#include <unistd.h>

#include "../base/random.h"
#include "records.h"

/* Each process draws its own seed (getrandom), so that where in a process an allocation falls
 * does not decide whether it can be sampled: with one fixed seed every process drew the same
 * first interval, and the first ~330 KB of every process went unsampled. A forked child mixes
 * its parent's seed with its own pid and the clock (another getrandom would be a page of the C
 * library's code faulted in every child). QAUDIT_SEED makes a run reproducible: a forked child
 * then takes the seed mixed with its parent's count of forks. */
static uint64_t process_seed QA_FORK_STATE, forks QA_FORK_STATE;

/* Seeds are written in dumps as JSON numbers: 53 bits survive every reader (JavaScript's
 * included), and QAUDIT_SEED takes any of them back. */
#define SEED_MASK ((1ull << 53) - 1)

static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* What tells two processes apart without entropy: the clock and the pid. */
static uint64_t clock_and_pid(void)
{
    return mix(qa_monotonic_ns() ^ ((uint64_t)getpid() << 32));
}

static uint64_t fresh_seed(void)
{
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == (ssize_t)sizeof seed)
        return seed & SEED_MASK;
    return clock_and_pid() & SEED_MASK; /* no entropy yet (early boot) */
}

/* A forked child's: its parent's seed (from getrandom) with its pid and the clock mixed in, so
 * that siblings differ from each other and from their parent. */
static uint64_t child_seed(void)
{
    return mix(process_seed ^ clock_and_pid()) & SEED_MASK;
}

/* libm's logarithms, loaded only where sampling is on: linked in, libm was one more library in
 * every process's lookup scope and one more finaliser at every exit, which in a forked child
 * that lives a millisecond was a tenth of what the interposer added (bench/RESULTS.md, "Forks").
 * NULL when libm cannot be loaded (a chroot without it): intervals are then fixed, every Nth
 * allocation or byte, and a sample weighs what fixed intervals give. */
static double (*log_fn)(double), (*log1p_fn)(double), (*expm1_fn)(double);

static void math_load(void)
{
    /* The loader's dlopen, not the exported one (host/loader.c, the program's). */
    void *libm = qa_real.dlopen_fn ? qa_real.dlopen_fn("libm.so.6", RTLD_NOW | RTLD_LOCAL) : NULL;
    if (libm != NULL) {
        log_fn = (double (*)(double))dlsym(libm, "log");
        log1p_fn = (double (*)(double))dlsym(libm, "log1p");
        expm1_fn = (double (*)(double))dlsym(libm, "expm1");
    }
    if (log_fn == NULL || log1p_fn == NULL || expm1_fn == NULL) {
        log_fn = NULL;
        qa_log("cannot load libm.so.6: sampling intervals are fixed, not drawn");
    }
}

void qa_sampling_init(void)
{
    process_seed = qa_cfg.seed_set ? qa_cfg.seed : fresh_seed();
    if (qa_cfg.stacks == QA_STACKS_SAMPLED && qa_cfg.sample_every > 1)
        math_load();
}

uint64_t qa_sampling_seed(void)
{
    return process_seed;
}

void qa_sampling_before_fork(void)
{
    forks++;
}

/* The child's seed, and its one thread's sampling stream drawn from it. (The fault injector's
 * stream stays what QAUDIT_FAIL's seed and the record's order make it: threads.c.) */
void qa_sampling_after_fork_child(struct qa_thread *self)
{
    process_seed = qa_cfg.seed_set ? mix(process_seed ^ mix(forks)) & SEED_MASK : child_seed();
    forks = 0;
    if (self != NULL)
        qa_sample_seed(self, 0);
}

/* The thread's own stream, apart from the fault injector's so that a run's injected faults do
 * not depend on the stack mode: the process's seed and the record's order. */
void qa_sample_seed(struct qa_thread *t, uint64_t order)
{
    t->sample_rng = mix(process_seed ^ mix(order + 1)) | 1;
    t->sample_left = qa_sample_interval(t);
}

/* The allocations (by count) or bytes until the next sample, at least 1. */
int64_t qa_sample_interval(struct qa_thread *t)
{
    double n = (double)qa_cfg.sample_every;
    if (qa_cfg.sample_every <= 1)
        return 1;
    if (log_fn == NULL)
        return (int64_t)qa_cfg.sample_every;
    double u = qa_random_unit(&t->sample_rng), draw;
    if (qa_cfg.sample_by_bytes)
        draw = -log_fn(u) * n;
    else
        draw = floor(log_fn(u) / log1p_fn(-1.0 / n)) + 1; /* trials until the first success */
    if (!(draw >= 1))
        return 1;
    return draw > (double)(1ull << 62) ? (int64_t)(1ull << 62) : (int64_t)draw;
}

/* What one allocation of size bytes sampled by bytes stands for, in 1/QA_WEIGHT_ONE allocations
 * and in bytes: 1 / (1 - e^(-s/N)) allocations of s bytes. (By count a sample stands for N
 * allocations, which the report knows without a sum.) */
void qa_sample_weight(uint64_t size, uint64_t *allocs, uint64_t *bytes)
{
    double n = (double)qa_cfg.sample_every;
    double w = 1;
    if (size != 0 && n > 1 && log_fn != NULL)
        w = -1 / expm1_fn(-(double)size / n);
    else if (size != 0 && (double)size < n)
        w = n / (double)size; /* fixed intervals: sampled when it crosses one */
    *allocs = (uint64_t)(w * QA_WEIGHT_ONE + 0.5);
    *bytes = (uint64_t)(w * (double)size + 0.5);
}
