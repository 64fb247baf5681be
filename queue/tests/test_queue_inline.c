/* Checks that only the inline ring queue makes: its pinned layout, the exact growth and shrink
 * rules, the allocations they imply (none at depth one), shrink failure, untouched slots, and
 * what move does with heads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "queue/rxq.h"
#include "test_alloc.h"

QUEUE_DEFINE(q4, int, 4)
QUEUE_DEFINE(d4, struct rx_desc, 4)

static struct rx_desc desc(uint32_t i)
{
    return (struct rx_desc){(uint16_t)i, i, i};
}

static void push_desc(struct rxq *q, uint32_t key)
{
    struct rx_desc d = desc(key);
    assert_true(rxq_push(q, &d));
}

static uint32_t pop_desc(struct rxq *q)
{
    struct rx_desc out = {0, 0, 0};
    assert_true(rxq_pop(q, &out));
    return out.length;
}

static void push_int(struct q4 *q, int v)
{
    assert_true(q4_push(q, &v));
}

static int pop_int(struct q4 *q)
{
    int out = 0;
    assert_true(q4_pop(q, &out));
    return out;
}

static void test_rx_queue_layout(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct rx_desc), 12);
    assert_int_equal(sizeof(struct rxq), 32);
    assert_int_equal(offsetof(struct rxq, head), 16);
    assert_int_equal(offsetof(struct rxq, lowwater), 28);
}

/* Capacity after each push: 1 inline slot, then 8, then doubling. */
static void test_growth_sequence(void **state)
{
    (void)state;
    test_alloc_install();
    struct rxq q;
    rxq_init(&q);
    size_t expected = 1, allocs = 0;
    for (uint32_t depth = 1; depth <= 300; depth++) {
        if (depth > expected) {
            expected = expected == 1 ? 8 : expected * 2;
            allocs++;
        }
        push_desc(&q, depth);
        assert_int_equal(rxq_capacity(&q), expected);
        assert_int_equal(test_alloc_stats()->allocs, allocs);
        assert_int_equal(test_alloc_stats()->live_blocks, allocs ? 1 : 0);
    }
    rxq_destroy(&q);
    test_alloc_uninstall_expect_no_leaks();
}

/* log2 steps from the first heap capacity up to depth, plus the first allocation. */
static size_t predicted_allocs(size_t inline_slots, size_t depth)
{
    if (depth <= inline_slots)
        return 0;
    size_t capacity = inline_slots * 2 > 8 ? inline_slots * 2 : 8, allocs = 1;
    while (capacity < depth) {
        capacity *= 2;
        allocs++;
    }
    return allocs;
}

static void test_allocations_at_depth_n(void **state)
{
    (void)state;
    for (uint32_t depth = 1; depth <= 520; depth++) {
        test_alloc_install();
        struct rxq q;
        rxq_init(&q);
        struct q4 q4;
        q4_init(&q4);
        for (uint32_t i = 0; i < depth; i++)
            push_desc(&q, i);
        assert_int_equal(test_alloc_stats()->allocs, predicted_allocs(1, depth));
        for (uint32_t i = 0; i < depth; i++)
            push_int(&q4, (int)i);
        assert_int_equal(test_alloc_stats()->allocs,
                         predicted_allocs(1, depth) + predicted_allocs(4, depth));
        rxq_destroy(&q);
        q4_destroy(&q4);
        test_alloc_uninstall_expect_no_leaks();
    }
}

static void depth_one_cycles(struct rxq *q, int cycles)
{
    for (int i = 0; i < cycles; i++) {
        push_desc(q, (uint32_t)i);
        assert_int_equal(pop_desc(q), (uint32_t)i);
    }
}

static void test_depth_one_cycles_allocate_nothing(void **state)
{
    (void)state;
    test_alloc_install();
    struct rxq q;
    rxq_init(&q);
    depth_one_cycles(&q, 10000);
    assert_int_equal(test_alloc_stats()->allocs, 0);
    /* After a burst has taken the queue to the heap and back, depth one is free again. */
    for (uint32_t i = 0; i < 50; i++)
        push_desc(&q, i);
    for (uint32_t i = 0; i < 50; i++)
        pop_desc(&q);
    depth_one_cycles(&q, 200);
    assert_false(rxq_on_heap(&q));
    size_t allocs = test_alloc_stats()->allocs;
    depth_one_cycles(&q, 10000);
    assert_int_equal(test_alloc_stats()->allocs, allocs);
    rxq_destroy(&q);
    test_alloc_uninstall_expect_no_leaks();
}

/* 1 -> 8 -> 1: one allocation and one release per transition; the eighth low-water pop returns
 * the queue to its inline slot and allocates nothing. */
static void test_repeated_inline_heap_transitions(void **state)
{
    (void)state;
    test_alloc_install();
    struct rxq q;
    rxq_init(&q);
    for (size_t round = 1; round <= 1000; round++) {
        push_desc(&q, 1);
        push_desc(&q, 2); /* grows to 8 */
        assert_int_equal(rxq_capacity(&q), 8);
        assert_int_equal(pop_desc(&q), 1); /* depth 1: low-water pop 1 */
        assert_int_equal(pop_desc(&q), 2); /* depth 0: 2 */
        depth_one_cycles(&q, 5);           /* 3..7 */
        assert_int_equal(rxq_capacity(&q), 8);
        depth_one_cycles(&q, 1); /* 8: back inline */
        assert_int_equal(rxq_capacity(&q), 1);
        assert_int_equal(test_alloc_stats()->allocs, round);
        assert_int_equal(test_alloc_stats()->releases, round);
    }
    rxq_destroy(&q);
    test_alloc_uninstall_expect_no_leaks();
}

static void test_push_above_mark_resets_count(void **state)
{
    (void)state;
    test_alloc_install();
    struct rxq q;
    rxq_init(&q);
    push_desc(&q, 1);
    push_desc(&q, 2);
    pop_desc(&q);
    pop_desc(&q);
    depth_one_cycles(&q, 5); /* seven low-water pops so far */
    push_desc(&q, 3);
    push_desc(&q, 4); /* depth 2 > 1: the count starts again */
    pop_desc(&q);
    pop_desc(&q);
    depth_one_cycles(&q, 5);
    assert_int_equal(rxq_capacity(&q), 8);
    depth_one_cycles(&q, 1);
    assert_int_equal(rxq_capacity(&q), 1);
    rxq_destroy(&q);
    test_alloc_uninstall_expect_no_leaks();
}

/* With 4 inline slots the first heap capacity is 8 and its mark 2, so the queue returns inline
 * holding a value (depth 3 would reset the count, so at most mark - 1 values survive the eighth
 * low-water pop); it comes back in order and nothing is allocated for it. */
static void test_shrink_to_inline_with_live_values(void **state)
{
    (void)state;
    test_alloc_install();
    struct q4 q;
    q4_init(&q);
    for (int i = 0; i < 5; i++)
        push_int(&q, i); /* grows to 8 */
    for (int i = 0; i < 4; i++)
        assert_int_equal(pop_int(&q), i); /* to depths 2 and 1: two low-water pops */
    int next_in = 5, next_out = 4;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(q4_capacity(&q), 8);
        push_int(&q, next_in++);
        assert_int_equal(pop_int(&q), next_out++);
    }
    assert_int_equal(q4_capacity(&q), 4);
    assert_int_equal(q4_size(&q), 1);
    assert_int_equal(q.head, 0);
    assert_int_equal(test_alloc_stats()->allocs, 1);
    assert_int_equal(test_alloc_stats()->releases, 1);
    assert_int_equal(pop_int(&q), next_out++);
    q4_destroy(&q);
    test_alloc_uninstall_expect_no_leaks();
}

/* Push/pop pairs between depth-1 and depth at the given mark: every pop is a low-water pop. */
static void cycle_at_mark(struct rxq *q, uint32_t *next_in, uint32_t *next_out, int pops)
{
    for (int i = 0; i < pops; i++) {
        push_desc(q, (*next_in)++);
        assert_int_equal(pop_desc(q), (*next_out)++);
    }
}

/* A large heap array halves after a full capacity's worth of low-water pops, with a wrapped head,
 * keeping order, until it is back inline. */
static void test_halving_steps_back_to_inline(void **state)
{
    (void)state;
    test_alloc_install();
    struct rxq q;
    rxq_init(&q);
    uint32_t next_in = 0, next_out = 0;
    while (next_in < 40)
        push_desc(&q, next_in++);
    assert_int_equal(rxq_capacity(&q), 64);
    const uint32_t steps[][2] = {{64, 16}, {32, 8}, {16, 4}, {8, 1}};
    for (size_t s = 0; s < 4; s++) {
        uint32_t capacity = steps[s][0], mark = steps[s][1];
        /* Draining to mark - 1 counts two low-water pops (to mark and to mark - 1); each pair
         * that peaks at the mark counts one more, so capacity - 2 pairs shrink the array. */
        while (next_in - next_out > mark - 1)
            assert_int_equal(pop_desc(&q), next_out++);
        assert_int_equal(rxq_capacity(&q), capacity);
        size_t allocs = test_alloc_stats()->allocs;
        cycle_at_mark(&q, &next_in, &next_out, (int)capacity - 3);
        assert_int_equal(rxq_capacity(&q), capacity);
        cycle_at_mark(&q, &next_in, &next_out, 1);
        assert_int_equal(rxq_capacity(&q), s == 3 ? 1 : capacity / 2);
        assert_int_equal(test_alloc_stats()->allocs, allocs + (s == 3 ? 0 : 1));
        for (uint32_t i = 0; i < next_in - next_out; i++)
            assert_int_equal(rxq_at(&q, i)->length, next_out + i);
    }
    rxq_destroy(&q);
    test_alloc_uninstall_expect_no_leaks();
}

static void test_shrink_failure_keeps_working(void **state)
{
    (void)state;
    test_alloc_install();
    struct rxq q;
    rxq_init(&q);
    uint32_t next_in = 0, next_out = 0;
    while (next_in < 17)
        push_desc(&q, next_in++);
    assert_int_equal(rxq_capacity(&q), 32);
    while (next_in - next_out > 7)
        assert_int_equal(pop_desc(&q), next_out++); /* pops to 8 and 7: two low-water pops */
    cycle_at_mark(&q, &next_in, &next_out, 29);
    assert_int_equal(rxq_capacity(&q), 32);
    test_alloc_fail_all(true);
    cycle_at_mark(&q, &next_in, &next_out, 1); /* the 32nd: shrinking cannot allocate */
    test_alloc_fail_all(false);
    assert_int_equal(test_alloc_stats()->failed, 1);
    assert_int_equal(rxq_capacity(&q), 32);
    for (uint32_t i = 0; i < next_in - next_out; i++)
        assert_int_equal(rxq_at(&q, i)->length, next_out + i);
    /* The count starts again: 31 more keep the array, the 32nd shrinks it. */
    cycle_at_mark(&q, &next_in, &next_out, 31);
    assert_int_equal(rxq_capacity(&q), 32);
    cycle_at_mark(&q, &next_in, &next_out, 1);
    assert_int_equal(rxq_capacity(&q), 16);
    for (uint32_t i = 0; i < next_in - next_out; i++)
        assert_int_equal(rxq_at(&q, i)->length, next_out + i);
    rxq_destroy(&q);
    test_alloc_uninstall_expect_no_leaks();
}

/* Heap slots [from, to) of q still hold the allocator's fill pattern. */
static void expect_heap_untouched(struct d4 *q, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++)
        assert_true(test_alloc_untouched(&q->store.heap[i], sizeof(struct rx_desc)));
}

static void push_d4(struct d4 *q, uint32_t key)
{
    struct rx_desc d = desc(key);
    assert_true(d4_push(q, &d));
}

static void test_unused_slots_never_written(void **state)
{
    (void)state;
    test_alloc_install();
    struct d4 q;
    memset(&q, TEST_ALLOC_PATTERN, sizeof q);
    d4_init(&q);
    assert_true(test_alloc_untouched(q.store.slots, sizeof q.store.slots));
    push_d4(&q, 0);
    assert_true(test_alloc_untouched(&q.store.slots[1], 3 * sizeof(struct rx_desc)));
    for (uint32_t i = 1; i < 4; i++)
        push_d4(&q, i);
    struct d4 before_growth = q;
    push_d4(&q, 4); /* grows to 8: slots 0..4 copied or pushed, 5..7 never written */
    assert_int_equal(d4_capacity(&q), 8);
    expect_heap_untouched(&q, 5, 8);
    /* A pop leaves the vacated slot as it was, and so does clear. */
    d4_pop(&q, NULL);
    assert_int_equal(q.store.heap[0].length, 0);
    struct rx_desc heap_copy[8];
    memcpy(heap_copy, q.store.heap, sizeof heap_copy);
    d4_clear(&q);
    assert_memory_equal(heap_copy, q.store.heap, sizeof heap_copy);
    /* Four values from slot 0 on; to 9 values: grows to 16, slots 9..15 never written. */
    for (uint32_t i = 0; i < 9; i++)
        push_d4(&q, 100 + i);
    assert_int_equal(d4_capacity(&q), 16);
    expect_heap_untouched(&q, 9, 16);
    /* Down to 4 (the mark of 16: one low-water pop), 14 pairs at the mark, one more pop: the
     * sixteenth halves the array to 8 with 3 values, and its slots 3..7 are never written. */
    for (uint32_t i = 0; i < 5; i++)
        d4_pop(&q, NULL);
    for (uint32_t i = 0; i < 14; i++) {
        d4_pop(&q, NULL);
        push_d4(&q, 200 + i);
    }
    assert_int_equal(d4_capacity(&q), 16);
    d4_pop(&q, NULL);
    assert_int_equal(d4_capacity(&q), 8);
    assert_int_equal(d4_size(&q), 3);
    expect_heap_untouched(&q, 3, 8);
    /* Mark of 8 is 2: pops to 2 and 1, six pairs, and the queue is inline with one value. Inline
     * slots 1..3 are not rewritten: they hold what they held before the first growth. */
    d4_pop(&q, NULL);
    d4_pop(&q, NULL);
    for (uint32_t i = 0; i < 6; i++) {
        push_d4(&q, 300 + i);
        d4_pop(&q, NULL);
    }
    assert_int_equal(d4_capacity(&q), 4);
    assert_int_equal(d4_size(&q), 1);
    assert_memory_equal(&before_growth.store.slots[1], &q.store.slots[1],
                        3 * sizeof(struct rx_desc));
    d4_destroy(&q);
    test_alloc_uninstall_expect_no_leaks();
}

static void test_move_heads(void **state)
{
    (void)state;
    test_alloc_install();
    struct rxq src, dst;
    rxq_init(&src);
    rxq_init(&dst);
    for (uint32_t i = 0; i < 12; i++)
        push_desc(&src, i);
    for (uint32_t i = 0; i < 5; i++)
        pop_desc(&src);
    struct rx_desc *heap = src.store.heap;
    uint32_t head = src.head;
    assert_int_not_equal(head, 0);
    rxq_move(&dst, &src);
    assert_ptr_equal(dst.store.heap, heap);
    assert_int_equal(dst.head, head);
    assert_false(rxq_on_heap(&src));
    assert_int_equal(rxq_size(&src), 0);
    rxq_destroy(&dst);

    size_t allocs = test_alloc_stats()->allocs;
    struct q4 a, b;
    q4_init(&a);
    q4_init(&b);
    for (int i = 0; i < 3; i++)
        push_int(&a, i);
    pop_int(&a);
    pop_int(&a);
    push_int(&a, 3);
    push_int(&a, 4); /* head 2, values 2 3 4 wrapping */
    assert_int_equal(a.head, 2);
    q4_move(&b, &a);
    assert_int_equal(b.head, 0);
    assert_int_equal(b.store.slots[0], 2);
    assert_int_equal(b.store.slots[1], 3);
    assert_int_equal(b.store.slots[2], 4);
    assert_int_equal(test_alloc_stats()->allocs, allocs);
    q4_destroy(&b);
    q4_destroy(&a);
    rxq_destroy(&src);
    test_alloc_uninstall_expect_no_leaks();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rx_queue_layout),
        cmocka_unit_test(test_growth_sequence),
        cmocka_unit_test(test_allocations_at_depth_n),
        cmocka_unit_test(test_depth_one_cycles_allocate_nothing),
        cmocka_unit_test(test_repeated_inline_heap_transitions),
        cmocka_unit_test(test_push_above_mark_resets_count),
        cmocka_unit_test(test_shrink_to_inline_with_live_values),
        cmocka_unit_test(test_halving_steps_back_to_inline),
        cmocka_unit_test(test_shrink_failure_keeps_working),
        cmocka_unit_test(test_unused_slots_never_written),
        cmocka_unit_test(test_move_heads),
    };
    return cmocka_run_group_tests_name("inline queue", tests, NULL, NULL);
}
