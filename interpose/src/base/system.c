/* Raw memory, clocks and futexes: the interposer's own memory comes from mmap, never from the
 * allocator it counts; its system calls go to the C library's own syscall (qa_real), never to
 * the preload's exported wrapper (host/unwinder_fds.c). Context: any. */
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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

/* A private futex operation on word (FUTEX_WAIT or FUTEX_WAKE); timeout NULL for none. */
void qa_futex(_Atomic int *word, int op, int value, const struct timespec *timeout)
{
    qa_real.syscall_fn(SYS_futex, (int *)word, op | FUTEX_PRIVATE_FLAG, value, timeout, NULL, 0);
}
