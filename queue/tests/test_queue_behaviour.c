/* The behavioural suite for the variant chosen with QUEUE_VARIANT: FIFO order, wrapping, clear,
 * move, aliasing pushes and allocation failure, for inline capacities 1 to 32 and three element
 * types (int, the 12-byte receive descriptor, and an over-aligned element). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "queue/queue.h"
#include "test_alloc.h"

struct aligned_elem {
    _Alignas(32) uint64_t key;
    uint32_t filler;
};

static int make_int(uint32_t i)
{
    return (int)i;
}
static uint32_t key_int(const int *p)
{
    return (uint32_t)*p;
}

static struct rx_desc make_desc(uint32_t i)
{
    return (struct rx_desc){.buffer_id = (uint16_t)i, .length = i, .offset = ~i};
}
static uint32_t key_desc(const struct rx_desc *p)
{
    assert_int_equal(p->buffer_id, (uint16_t)p->length);
    assert_int_equal(p->offset, ~p->length);
    return p->length;
}

static struct aligned_elem make_aligned(uint32_t i)
{
    return (struct aligned_elem){.key = i, .filler = i * 3};
}
static uint32_t key_aligned(const struct aligned_elem *p)
{
    assert_int_equal(p->filler, (uint32_t)p->key * 3);
    return (uint32_t)p->key;
}

#define ELEM int
#define MAKE(i) make_int(i)
#define KEY(p) key_int(p)
#define INLINE_N 1
#define CASE int_1
#include "behaviour_cases.inc"
#define INLINE_N 2
#define CASE int_2
#include "behaviour_cases.inc"
#define INLINE_N 4
#define CASE int_4
#include "behaviour_cases.inc"
#define INLINE_N 8
#define CASE int_8
#include "behaviour_cases.inc"
#define INLINE_N 16
#define CASE int_16
#include "behaviour_cases.inc"
#define INLINE_N 32
#define CASE int_32
#include "behaviour_cases.inc"
#undef ELEM
#undef MAKE
#undef KEY

#define ELEM struct rx_desc
#define MAKE(i) make_desc(i)
#define KEY(p) key_desc(p)
#define INLINE_N 1
#define CASE desc_1
#include "behaviour_cases.inc"
#define INLINE_N 2
#define CASE desc_2
#include "behaviour_cases.inc"
#define INLINE_N 4
#define CASE desc_4
#include "behaviour_cases.inc"
#define INLINE_N 8
#define CASE desc_8
#include "behaviour_cases.inc"
#define INLINE_N 16
#define CASE desc_16
#include "behaviour_cases.inc"
#define INLINE_N 32
#define CASE desc_32
#include "behaviour_cases.inc"
#undef ELEM
#undef MAKE
#undef KEY

#define ELEM struct aligned_elem
#define MAKE(i) make_aligned(i)
#define KEY(p) key_aligned(p)
#define INLINE_N 1
#define CASE aligned_1
#include "behaviour_cases.inc"
#define INLINE_N 2
#define CASE aligned_2
#include "behaviour_cases.inc"
#define INLINE_N 4
#define CASE aligned_4
#include "behaviour_cases.inc"
#define INLINE_N 8
#define CASE aligned_8
#include "behaviour_cases.inc"
#define INLINE_N 16
#define CASE aligned_16
#include "behaviour_cases.inc"
#define INLINE_N 32
#define CASE aligned_32
#include "behaviour_cases.inc"

int main(void)
{
    int failed = 0;
    failed +=
        cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " int INLINE=1", tests_int_1, NULL, NULL);
    failed +=
        cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " int INLINE=2", tests_int_2, NULL, NULL);
    failed +=
        cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " int INLINE=4", tests_int_4, NULL, NULL);
    failed +=
        cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " int INLINE=8", tests_int_8, NULL, NULL);
    failed +=
        cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " int INLINE=16", tests_int_16, NULL, NULL);
    failed +=
        cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " int INLINE=32", tests_int_32, NULL, NULL);
    failed +=
        cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " desc INLINE=1", tests_desc_1, NULL, NULL);
    failed +=
        cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " desc INLINE=2", tests_desc_2, NULL, NULL);
    failed +=
        cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " desc INLINE=4", tests_desc_4, NULL, NULL);
    failed +=
        cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " desc INLINE=8", tests_desc_8, NULL, NULL);
    failed += cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " desc INLINE=16", tests_desc_16, NULL,
                                          NULL);
    failed += cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " desc INLINE=32", tests_desc_32, NULL,
                                          NULL);
    failed += cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " aligned INLINE=1", tests_aligned_1,
                                          NULL, NULL);
    failed += cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " aligned INLINE=2", tests_aligned_2,
                                          NULL, NULL);
    failed += cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " aligned INLINE=4", tests_aligned_4,
                                          NULL, NULL);
    failed += cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " aligned INLINE=8", tests_aligned_8,
                                          NULL, NULL);
    failed += cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " aligned INLINE=16", tests_aligned_16,
                                          NULL, NULL);
    failed += cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " aligned INLINE=32", tests_aligned_32,
                                          NULL, NULL);
    return failed == 0 ? 0 : 1;
}
