/* Without a qaudit_hook definition the weak symbol is NULL, and every queue operation, including
 * growth, shrink and return-to-inline, runs without calling it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "queue/rxq.h"
#include "test_alloc.h"

static void test_hook_is_null_and_queue_works(void **state)
{
    (void)state;
    assert_null(qaudit_hook);
    test_alloc_install();
    struct rxq q, other;
    rxq_init(&q);
    rxq_init(&other);
    int conn = 0;
    qaudit_conn_open(&conn, &q);
    for (uint32_t i = 0; i < 100; i++) {
        struct rx_desc d = {(uint16_t)i, i, 0};
        assert_true(rxq_push(&q, &d));
    }
    for (uint32_t i = 0; i < 100; i++)
        assert_true(rxq_pop(&q, NULL));
    /* Low-water cycles walk the array down 128, 64, 32, 16, 8 and back inline. */
    for (uint32_t i = 0; i < 400; i++) {
        struct rx_desc d = {(uint16_t)i, i, 0};
        assert_true(rxq_push(&q, &d));
        assert_true(rxq_pop(&q, NULL));
    }
    assert_false(rxq_on_heap(&q));
    rxq_clear(&q);
    rxq_move(&other, &q);
    rxq_destroy(&other);
    rxq_destroy(&q);
    qaudit_conn_close(&conn, &q);
    test_alloc_uninstall_expect_no_leaks();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_hook_is_null_and_queue_works)};
    return cmocka_run_group_tests_name("hooks absent", tests, NULL, NULL);
}
