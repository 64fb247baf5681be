/* Holds BLOCKS live blocks of SIZE bytes, allocated from 16 call paths, then prints the process's
 * peak and current resident memory (VmHWM, VmRSS, in KiB) read from /proc/self/status before the
 * blocks are freed: what a profiler keeps per live block is the difference to a native run over
 * BLOCKS (bench/live_memory.sh). Read by the process itself, so a tool's helper processes
 * (heaptrack's interpreter) are not counted with it. usage: live_blocks BLOCKS [SIZE] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PATHS = 16 };

__attribute__((noinline)) static void *allocate(size_t size)
{
    char *p = malloc(size);
    if (p)
        p[0] = 1;
    return p;
}

/* Recursion DEPTH deep before allocating: PATHS depths are PATHS distinct stacks, so a
 * stack-keeping tool sees PATHS sites, as a server's several call paths would give it. */
__attribute__((noinline)) static void *descend(int depth, size_t size)
{
    void *p = depth == 0 ? allocate(size) : descend(depth - 1, size);
    __asm__ volatile("" ::: "memory"); /* no tail call: each level keeps its frame */
    return p;
}

static void print_status(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return;
    char line[256];
    long hwm = -1, rss = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmHWM:", 6) == 0)
            hwm = atol(line + 6);
        else if (strncmp(line, "VmRSS:", 6) == 0)
            rss = atol(line + 6);
    }
    fclose(f);
    printf("%ld %ld\n", hwm, rss);
}

int main(int argc, char **argv)
{
    long blocks = argc > 1 ? atol(argv[1]) : 0;
    long size = argc > 2 ? atol(argv[2]) : 32;
    if (argc < 2 || argc > 3 || blocks < 0 || size < 1) {
        fprintf(stderr, "usage: live_blocks BLOCKS [SIZE]\n");
        return 2;
    }
    void **live = calloc((size_t)blocks + 1, sizeof *live);
    if (live == NULL)
        return 1;
    for (long i = 0; i < blocks; i++)
        live[i] = descend((int)(i % PATHS), (size_t)size);
    print_status();
    for (long i = 0; i < blocks; i++)
        free(live[i]);
    free(live);
    return 0;
}
