/* The interposer's random numbers: xorshift64*, one state word per stream (a thread's fault
 * injector, a thread's sampler), no locks, no allocation.
 * Context: a stream's owning thread only, the fast path's sampler included. */
#ifndef QA_RANDOM_H
#define QA_RANDOM_H

#include <stdint.h>

static inline uint64_t qa_random_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in (0, 1]: never 0, whose logarithm is unbounded. */
static inline double qa_random_unit(uint64_t *state)
{
    return (double)((qa_random_next(state) >> 11) + 1) / 9007199254740992.0;
}

#endif
