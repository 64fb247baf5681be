/* A queue allocator for tests: counts allocations and releases, fails on demand, and fills new
 * blocks with a pattern so a test can see which bytes the queue wrote. */
#ifndef QUEUE_TEST_ALLOC_H
#define QUEUE_TEST_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

#define TEST_ALLOC_PATTERN 0xA5

struct test_alloc_stats {
    size_t allocs; /* successful allocations */
    size_t releases;
    size_t failed; /* allocations refused on purpose */
    size_t live_blocks;
    size_t live_bytes;
};

/* Installs the counting allocator with zeroed statistics and no failures. */
void test_alloc_install(void);
/* Restores malloc/free; fails the test (cmocka) if blocks are still live. */
void test_alloc_uninstall_expect_no_leaks(void);

const struct test_alloc_stats *test_alloc_stats(void);

/* Refuse every allocation from now on (true) or none (false). */
void test_alloc_fail_all(bool fail);
/* Refuse only the allocation that comes n-th from now (1 = the next one). */
void test_alloc_fail_nth(size_t n);

/* True when every byte of [p, p + n) still holds TEST_ALLOC_PATTERN. */
bool test_alloc_untouched(const void *p, size_t n);

#endif
