/* With a qaudit_hook definition linked in, every queue and connection event arrives, in order,
 * with the right depth, capacity and discarded count; code built with QAUDIT_HOOKS=0 sends none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "queue/rxq.h"
#include "test_alloc.h"

/* Defined in hooks_compiled_out.c, built with QAUDIT_HOOKS=0. */
void drive_queue_with_hooks_compiled_out(void);

enum { MAX_EVENTS = 256 };
static struct qaudit_event events[MAX_EVENTS];
static size_t event_count;

void qaudit_hook(const struct qaudit_event *event)
{
    if (event_count < MAX_EVENTS)
        events[event_count] = *event;
    event_count++;
}

struct expected_event {
    uint32_t kind;
    uint64_t depth, capacity, discarded;
};

static void expect_events(const void *queue, const struct expected_event *expected, size_t n)
{
    assert_int_equal(event_count, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(events[i].abi, QAUDIT_HOOKS_ABI);
        assert_int_equal(events[i].kind, expected[i].kind);
        assert_ptr_equal(events[i].queue, queue);
        assert_int_equal(events[i].depth, expected[i].depth);
        assert_int_equal(events[i].capacity, expected[i].capacity);
        assert_int_equal(events[i].discarded, expected[i].discarded);
    }
    event_count = 0;
}

static void push(struct rxq *q, uint32_t key)
{
    struct rx_desc d = {(uint16_t)key, key, 0};
    assert_true(rxq_push(q, &d));
}

static void test_every_event_arrives(void **state)
{
    (void)state;
    assert_non_null(qaudit_hook);
    test_alloc_install();
    struct rxq q;
    rxq_init(&q);
    event_count = 0;

    push(&q, 1);
    rxq_pop(&q, NULL);
    expect_events(
        &q, (struct expected_event[]){{QAUDIT_QUEUE_PUSH, 1, 1, 0}, {QAUDIT_QUEUE_POP, 0, 1, 0}},
        2);

    push(&q, 1);
    push(&q, 2);
    expect_events(&q,
                  (struct expected_event[]){{QAUDIT_QUEUE_PUSH, 1, 1, 0},
                                            {QAUDIT_QUEUE_ENTER, 2, 1, 0},
                                            {QAUDIT_QUEUE_GROW, 2, 8, 0},
                                            {QAUDIT_QUEUE_LEAVE, 2, 8, 0},
                                            {QAUDIT_QUEUE_PUSH, 2, 8, 0}},
                  5);

    /* Two low-water pops, six depth-one cycles: the last pop returns the queue inline. */
    rxq_pop(&q, NULL);
    rxq_pop(&q, NULL);
    for (int i = 0; i < 6; i++) {
        push(&q, 3);
        rxq_pop(&q, NULL);
    }
    assert_int_equal(event_count, 2 + 12 + 1);
    assert_int_equal(events[13].kind, QAUDIT_QUEUE_POP);
    assert_int_equal(events[14].kind, QAUDIT_QUEUE_INLINE);
    assert_int_equal(events[14].depth, 0);
    assert_int_equal(events[14].capacity, 1);
    event_count = 0;

    for (uint32_t i = 0; i < 3; i++)
        push(&q, i);
    event_count = 0;
    rxq_clear(&q);
    expect_events(&q, (struct expected_event[]){{QAUDIT_QUEUE_CLEAR, 0, 8, 3}}, 1);

    struct rxq other;
    rxq_init(&other);
    push(&other, 9);
    push(&q, 5);
    event_count = 0;
    rxq_move(&other, &q);
    expect_events(&other, (struct expected_event[]){{QAUDIT_QUEUE_MOVE, 1, 8, 1}}, 1);

    rxq_destroy(&other);
    expect_events(&other, (struct expected_event[]){{QAUDIT_QUEUE_DESTROY, 0, 1, 1}}, 1);
    rxq_destroy(&q);
    event_count = 0;
    test_alloc_uninstall_expect_no_leaks();
}

static void test_move_names_source(void **state)
{
    (void)state;
    struct rxq a, b;
    rxq_init(&a);
    rxq_init(&b);
    event_count = 0;
    rxq_move(&b, &a);
    assert_int_equal(event_count, 1);
    assert_ptr_equal(events[0].queue, &b);
    assert_ptr_equal(events[0].other, &a);
    event_count = 0;
}

static void test_connection_events(void **state)
{
    (void)state;
    int conn = 0;
    struct rxq q;
    rxq_init(&q);
    event_count = 0;
    qaudit_conn_open(&conn, &q);
    qaudit_conn_close(&conn, &q);
    assert_int_equal(event_count, 2);
    assert_int_equal(events[0].kind, QAUDIT_CONN_OPEN);
    assert_ptr_equal(events[0].owner, &conn);
    assert_ptr_equal(events[0].queue, &q);
    assert_int_equal(events[1].kind, QAUDIT_CONN_CLOSE);
    event_count = 0;
}

static void test_compiled_out_sends_nothing(void **state)
{
    (void)state;
    event_count = 0;
    drive_queue_with_hooks_compiled_out();
    assert_int_equal(event_count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_event_arrives),
        cmocka_unit_test(test_move_names_source),
        cmocka_unit_test(test_connection_events),
        cmocka_unit_test(test_compiled_out_sends_nothing),
    };
    return cmocka_run_group_tests_name("hooks", tests, NULL, NULL);
}
