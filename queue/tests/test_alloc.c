/* Counting, failing, pattern-filling queue allocator for the queue tests. */
#include "test_alloc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "queue/queue_alloc.h"

static struct test_alloc_stats stats;
static bool fail_all;
static size_t fail_countdown;

static void *counting_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    if (fail_all || (fail_countdown > 0 && --fail_countdown == 0)) {
        stats.failed++;
        return NULL;
    }
    size_t rounded = (size + align - 1) & ~(align - 1);
    void *block = aligned_alloc(align < sizeof(void *) ? sizeof(void *) : align, rounded);
    if (block == NULL)
        return NULL;
    memset(block, TEST_ALLOC_PATTERN, rounded);
    stats.allocs++;
    stats.live_blocks++;
    stats.live_bytes += size;
    return block;
}

static void counting_release(void *block, size_t size, void *ctx)
{
    (void)ctx;
    stats.releases++;
    stats.live_blocks--;
    stats.live_bytes -= size;
    free(block);
}

void test_alloc_install(void)
{
    static const struct queue_allocator allocator = {counting_alloc, counting_release, NULL};
    memset(&stats, 0, sizeof stats);
    fail_all = false;
    fail_countdown = 0;
    queue_set_allocator(&allocator);
}

void test_alloc_uninstall_expect_no_leaks(void)
{
    queue_set_allocator(NULL);
    assert_int_equal(stats.live_blocks, 0);
    assert_int_equal(stats.live_bytes, 0);
    assert_int_equal(stats.allocs, stats.releases);
}

const struct test_alloc_stats *test_alloc_stats(void)
{
    return &stats;
}

void test_alloc_fail_all(bool fail)
{
    fail_all = fail;
}

void test_alloc_fail_nth(size_t n)
{
    fail_countdown = n;
}

bool test_alloc_untouched(const void *p, size_t n)
{
    const unsigned char *bytes = p;
    for (size_t i = 0; i < n; i++)
        if (bytes[i] != TEST_ALLOC_PATTERN)
            return false;
    return true;
}
