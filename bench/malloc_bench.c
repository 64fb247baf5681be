/* A malloc-heavy workload for comparing allocation profilers: THREADS threads each make OPS
 * allocations of 16..1024 bytes, freed at once ("churn") or replacing one of 10,000 live blocks
 * ("live10k"). Prints the loop's own time in ns per allocation, so start-up costs of the tool
 * under test do not count. usage: malloc_bench churn|live10k THREADS OPS */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { LIVE = 10000 };

static long ops;
static int keep_live;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static size_t next_size(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return 16 + (*state >> 16) % 1009;
}

__attribute__((noinline)) static void *allocate(size_t size)
{
    char *p = malloc(size);
    if (p)
        p[0] = 1;
    return p;
}

static void *work(void *arg)
{
    unsigned state = (unsigned)(uintptr_t)arg * 7919u + 1;
    void **live = keep_live ? calloc(LIVE, sizeof *live) : NULL;
    for (long i = 0; i < ops; i++) {
        void *p = allocate(next_size(&state));
        if (keep_live) {
            size_t slot = (state >> 8) % LIVE;
            free(live[slot]);
            live[slot] = p;
        } else {
            free(p);
        }
    }
    if (live) {
        for (int i = 0; i < LIVE; i++)
            free(live[i]);
        free(live);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "churn") != 0 && strcmp(argv[1], "live10k") != 0)) {
        fprintf(stderr, "usage: malloc_bench churn|live10k THREADS OPS\n");
        return 2;
    }
    keep_live = argv[1][0] == 'l';
    int threads = atoi(argv[2]);
    ops = atol(argv[3]);
    if (threads < 1 || threads > 64 || ops < 1) {
        fprintf(stderr, "malloc_bench: THREADS 1..64, OPS >= 1\n");
        return 2;
    }
    pthread_t ids[64];
    double start = now_ns();
    for (int i = 0; i < threads; i++)
        pthread_create(&ids[i], NULL, work, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < threads; i++)
        pthread_join(ids[i], NULL);
    double elapsed = now_ns() - start;
    printf("%.2f\n", elapsed / (double)ops); /* ns per allocation, per thread */
    return 0;
}
