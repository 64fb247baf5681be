/* serve's one clock, monotonic, for deadlines, --min-interval and the scan period: a leaf every
 * file of serve/ may call. */
#include <time.h>

#include "internal.h"

long long serve_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
