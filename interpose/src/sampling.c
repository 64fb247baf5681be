/* Stacks sampled:N and sampled:Nb: random sampling intervals and the weight of one sample.
 * Intervals are drawn, not fixed, so a program whose allocations repeat with a period (a loop of
 * 16 allocations under sampled:16) cannot hide its other sites: by count each allocation is
 * sampled with probability 1/N (geometric intervals), by bytes each byte with probability 1/N
 * (exponential intervals, as tcmalloc and jemalloc sample), so an allocation of s bytes is sampled
 * with probability 1 - e^(-s/N) and one sample stands for 1 / (1 - e^(-s/N)) allocations. */
#include <math.h>

#include "random.h"
#include "state.h"

/* The thread's own stream, apart from the fault injector's so that a run's injected faults do
 * not depend on the stack mode. Seeded from the record's order: runs are reproducible. */
void qa_sample_seed(struct qa_thread *t, uint64_t order)
{
    t->sample_rng = 0xd1b54a32d192ed03ull * (order + 1) | 1;
    t->sample_left = qa_sample_interval(t);
}

/* The allocations (by count) or bytes until the next sample, at least 1. */
int64_t qa_sample_interval(struct qa_thread *t)
{
    double n = (double)qa_cfg.sample_every;
    if (qa_cfg.sample_every <= 1)
        return 1;
    double u = qa_random_unit(&t->sample_rng), draw;
    if (qa_cfg.sample_by_bytes)
        draw = -log(u) * n;
    else
        draw = floor(log(u) / log1p(-1.0 / n)) + 1; /* trials until the first success */
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
    double w = size == 0 || n <= 1 ? 1 : -1 / expm1(-(double)size / n);
    *allocs = (uint64_t)(w * QA_WEIGHT_ONE + 0.5);
    *bytes = (uint64_t)(w * (double)size + 0.5);
}
