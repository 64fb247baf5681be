/* Raw memory and clocks: the interposer's own memory comes from mmap, never from the allocator
 * it counts. Context: any. */
#include <sys/mman.h>
#include <time.h>

#include "base.h"

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
