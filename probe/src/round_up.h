/* n rounded up to a multiple of step (a size to its alignment, a request to its class); n itself
 * for a step of 0 or 1. Used by the class models, the C++ ABI's layout and --reorganize. */
#ifndef PROBE_ROUND_UP_H
#define PROBE_ROUND_UP_H

#include <stdint.h>

static inline uint64_t probe_round_up(uint64_t n, uint64_t step)
{
    return step > 1 ? (n + step - 1) / step * step : n;
}

#endif
