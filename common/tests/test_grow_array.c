/* common/grow_array: doubling, the first capacity, overflow and an unchanged array on failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/grow_array.h"

static void pushes_keep_earlier_items_and_zero_new_ones(void **state)
{
    (void)state;
    int *items = NULL;
    size_t count = 0, capacity = 0;
    for (int i = 0; i < 1000; i++) {
        int *slot = array_push(&items, &count, &capacity, sizeof *items);
        assert_non_null(slot);
        assert_int_equal(*slot, 0);
        *slot = i;
    }
    assert_int_equal(count, 1000);
    assert_int_equal(capacity, 1024);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(items[i], i);
    free(items);
}

static void the_first_capacity_is_eight_and_doubles_exactly_past_it(void **state)
{
    (void)state;
    char *items = NULL;
    size_t capacity = 0;
    assert_true(array_reserve(&items, &capacity, 1, 1));
    assert_int_equal(capacity, 8);
    assert_true(array_reserve(&items, &capacity, 8, 1)); /* at the limit: no growth */
    assert_int_equal(capacity, 8);
    assert_true(array_reserve(&items, &capacity, 9, 1)); /* one past it */
    assert_int_equal(capacity, 16);
    assert_true(array_reserve(&items, &capacity, 100, 1)); /* several doublings at once */
    assert_int_equal(capacity, 128);
    free(items);
}

static void an_overflowing_size_leaves_the_array_unchanged(void **state)
{
    (void)state;
    long *items = NULL;
    size_t count = 0, capacity = 0;
    assert_non_null(array_push(&items, &count, &capacity, sizeof *items));
    long *before = items;
    assert_false(array_reserve(&items, &capacity, SIZE_MAX / 2, sizeof *items));
    assert_ptr_equal(items, before);
    assert_int_equal(capacity, 8);
    assert_false(array_reserve(&items, &capacity, SIZE_MAX, 1));
    assert_int_equal(capacity, 8);
    count = SIZE_MAX;
    assert_null(array_push(&items, &count, &capacity, sizeof *items));
    assert_int_equal(count, SIZE_MAX);
    free(items);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pushes_keep_earlier_items_and_zero_new_ones),
        cmocka_unit_test(the_first_capacity_is_eight_and_doubles_exactly_past_it),
        cmocka_unit_test(an_overflowing_size_leaves_the_array_unchanged),
    };
    return cmocka_run_group_tests_name("grow_array", tests, NULL, NULL);
}
