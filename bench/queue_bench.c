/* Queue micro-benchmark: the inline ring against the previous ring and the chunked deque, for the
 * receive descriptor. Prints medians of several runs; bench/RESULTS.md records them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue/dequeq.h"
#include "queue/irq.h"
#include "queue/queue.h"
#include "queue/ringq.h"

IRQ_DEFINE(bq_inline, struct rx_desc, 1)
RINGQ_DEFINE(bq_ring, struct rx_desc)
DEQUEQ_DEFINE(bq_deque, struct rx_desc)

enum { RUNS = 5, CYCLES = 20000000, BURST_OPS = 20000000 };

static size_t allocations, live_bytes;

static void *counting_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx, (void)align;
    allocations++;
    live_bytes += size;
    return malloc(size);
}

static void counting_release(void *block, size_t size, void *ctx)
{
    (void)ctx;
    live_bytes -= size;
    free(block);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Keeps the compiler from folding a push into the following pop. */
#define CLOBBER(p) __asm__ volatile("" : : "r"(p) : "memory")

struct variant_result {
    double depth_one_ns, burst_ns[3];
    size_t allocs_per_1000, idle_bytes;
};

static const unsigned burst_depths[3] = {4, 16, 64};

/* One set of measurement functions per variant; the macro only stamps out the same code for the
 * three queue types so that no call goes through a function pointer. */
#define BENCH_VARIANT(name)                                                                        \
    static double name##_depth_one(void)                                                           \
    {                                                                                              \
        struct name q;                                                                             \
        name##_init(&q);                                                                           \
        struct rx_desc d = {1, 4096, 0}, out = d;                                                  \
        uint64_t sink = 0;                                                                         \
        double start = now_ns();                                                                   \
        for (uint32_t i = 0; i < CYCLES; i++) {                                                    \
            d.offset = i;                                                                          \
            name##_push(&q, &d);                                                                   \
            CLOBBER(&q);                                                                           \
            name##_pop(&q, &out);                                                                  \
            sink += out.offset;                                                                    \
        }                                                                                          \
        double elapsed = now_ns() - start;                                                         \
        CLOBBER(&sink);                                                                            \
        name##_destroy(&q);                                                                        \
        return elapsed / CYCLES;                                                                   \
    }                                                                                              \
                                                                                                   \
    static double name##_burst(unsigned depth)                                                     \
    {                                                                                              \
        struct name q;                                                                             \
        name##_init(&q);                                                                           \
        struct rx_desc d = {1, 4096, 0}, out = d;                                                  \
        uint64_t sink = 0;                                                                         \
        uint32_t rounds = BURST_OPS / (2 * depth);                                                 \
        double start = now_ns();                                                                   \
        for (uint32_t r = 0; r < rounds; r++) {                                                    \
            for (unsigned i = 0; i < depth; i++) {                                                 \
                d.offset = i;                                                                      \
                name##_push(&q, &d);                                                               \
                CLOBBER(&q);                                                                       \
            }                                                                                      \
            for (unsigned i = 0; i < depth; i++) {                                                 \
                name##_pop(&q, &out);                                                              \
                sink += out.offset;                                                                \
                CLOBBER(&q);                                                                       \
            }                                                                                      \
        }                                                                                          \
        double elapsed = now_ns() - start;                                                         \
        CLOBBER(&sink);                                                                            \
        name##_destroy(&q);                                                                        \
        return elapsed / ((double)rounds * 2 * depth);                                             \
    }                                                                                              \
                                                                                                   \
    /* Allocations during 1,000 depth-one cycles of a fresh queue, and what the queue then holds   \
     * while idle: the object plus its live heap bytes. */                                         \
    static void name##_footprint(struct variant_result *r)                                         \
    {                                                                                              \
        struct name q;                                                                             \
        name##_init(&q);                                                                           \
        struct rx_desc d = {1, 4096, 0};                                                           \
        size_t before = allocations;                                                               \
        for (int i = 0; i < 1000; i++) {                                                           \
            name##_push(&q, &d);                                                                   \
            name##_pop(&q, NULL);                                                                  \
        }                                                                                          \
        r->allocs_per_1000 = allocations - before;                                                 \
        r->idle_bytes = sizeof q + live_bytes;                                                     \
        name##_destroy(&q);                                                                        \
    }                                                                                              \
                                                                                                   \
    static void name##_measure(struct variant_result *r)                                           \
    {                                                                                              \
        r->depth_one_ns = name##_depth_one();                                                      \
        for (int b = 0; b < 3; b++)                                                                \
            r->burst_ns[b] = name##_burst(burst_depths[b]);                                        \
        name##_footprint(r);                                                                       \
    }

BENCH_VARIANT(bq_inline)
BENCH_VARIANT(bq_ring)
BENCH_VARIANT(bq_deque)

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof values[0], compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : RUNS;
    if (runs < 1 || runs > 101) {
        fprintf(stderr, "queue_bench: runs must be 1..101 (got %s)\n", argv[1]);
        return 2;
    }
    static const struct queue_allocator counting = {counting_alloc, counting_release, NULL};
    queue_set_allocator(&counting);

    static const char *names[3] = {"inline", "ring", "deque"};
    struct variant_result samples[3][101];
    /* Interleave variants within each run so drift in machine speed hits all three alike. */
    for (int run = 0; run < runs; run++) {
        bq_inline_measure(&samples[0][run]);
        bq_ring_measure(&samples[1][run]);
        bq_deque_measure(&samples[2][run]);
    }

    double depth_one[3];
    printf("queue_bench: median of %d runs, %d depth-one cycles and %d burst operations each\n\n",
           runs, CYCLES, BURST_OPS);
    printf("| variant | object B | ns/cycle depth 1 | ns/op burst 4 | ns/op burst 16 | "
           "ns/op burst 64 | allocs per 1000 depth-1 cycles | idle bytes |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    static const size_t object_sizes[3] = {sizeof(struct bq_inline), sizeof(struct bq_ring),
                                           sizeof(struct bq_deque)};
    for (int v = 0; v < 3; v++) {
        double column[101];
        for (int run = 0; run < runs; run++)
            column[run] = samples[v][run].depth_one_ns;
        depth_one[v] = median(column, runs);
        printf("| %s | %zu | %.2f |", names[v], object_sizes[v], depth_one[v]);
        for (int b = 0; b < 3; b++) {
            for (int run = 0; run < runs; run++)
                column[run] = samples[v][run].burst_ns[b];
            printf(" %.2f |", median(column, runs));
        }
        printf(" %zu | %zu |\n", samples[v][0].allocs_per_1000, samples[v][0].idle_bytes);
    }
    printf("\ndepth-one time ratio inline/ring: %.3f, inline/deque: %.3f\n",
           depth_one[0] / depth_one[1], depth_one[0] / depth_one[2]);
    return 0;
}
