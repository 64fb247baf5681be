/* Randomised differential test: millions of push, pop, front-update, clear and move operations
 * on the queue and on a trivially correct reference FIFO, compared after every step, together
 * with the capacity the variant's rules predict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "queue/queue.h"
#include "test_alloc.h"

QUEUE_DEFINE(dq, struct rx_desc, 1)
QUEUE_DEFINE(dq4, int, 4)

enum { REF_MAX = 1 << 12 };

/* The reference: a flat array with a moving window, compacted when it reaches the end. */
struct ref_fifo {
    uint32_t values[REF_MAX];
    uint32_t first, count;
};

static void ref_push(struct ref_fifo *r, uint32_t v)
{
    if (r->first + r->count == REF_MAX) {
        memmove(r->values, r->values + r->first, r->count * sizeof r->values[0]);
        r->first = 0;
    }
    r->values[r->first + r->count++] = v;
}

static uint32_t ref_pop(struct ref_fifo *r)
{
    r->count--;
    return r->values[r->first++];
}

/* The capacity rules of docs/design.md, written out independently of the queue's code. */
struct capacity_model {
    uint32_t inline_slots, capacity, lowwater;
};

#if QUEUE_VARIANT == QUEUE_VARIANT_INLINE
static uint32_t model_first_heap(const struct capacity_model *m)
{
    return m->inline_slots * 2 > 8 ? m->inline_slots * 2 : 8;
}

static uint32_t model_mark(const struct capacity_model *m)
{
    uint32_t quarter = m->capacity / 4;
    if (m->capacity == model_first_heap(m) && quarter > m->inline_slots)
        return m->inline_slots;
    return quarter;
}
#endif

static void model_after_push(struct capacity_model *m, uint32_t depth)
{
#if QUEUE_VARIANT == QUEUE_VARIANT_INLINE
    if (depth > m->capacity) {
        m->capacity = m->capacity == m->inline_slots ? model_first_heap(m) : m->capacity * 2;
        m->lowwater = 0;
    } else if (m->capacity != m->inline_slots && depth > model_mark(m)) {
        m->lowwater = 0;
    }
#elif QUEUE_VARIANT == QUEUE_VARIANT_RING
    if (depth > m->capacity)
        m->capacity = m->capacity ? m->capacity * 2 : 8;
#else
    (void)m, (void)depth;
#endif
}

static void model_after_pop(struct capacity_model *m, uint32_t depth)
{
#if QUEUE_VARIANT == QUEUE_VARIANT_INLINE
    if (m->capacity == m->inline_slots || depth > model_mark(m))
        return;
    if (++m->lowwater < m->capacity)
        return;
    m->lowwater = 0;
    m->capacity = m->capacity == model_first_heap(m) ? m->inline_slots : m->capacity / 2;
#else
    (void)m, (void)depth;
#endif
}

static void model_expect(const struct capacity_model *m, size_t capacity, size_t size)
{
#if QUEUE_VARIANT == QUEUE_VARIANT_DEQUE
    (void)m;
    assert_true(capacity > size);
#else
    (void)size;
    assert_int_equal(capacity, m->capacity);
#endif
}

/* Depth regimes: mostly shallow like a server at pipeline 1, sometimes bursts, rarely deep
 * enough to grow the heap array several times and then shrink it step by step. */
struct regime {
    uint32_t target_depth;
    long operations;
};

static struct regime pick_regime(unsigned *seed)
{
    int dice = rand_r(seed) % 100;
    if (dice < 75)
        return (struct regime){(uint32_t)(rand_r(seed) % 3), 64};
    if (dice < 98)
        return (struct regime){(uint32_t)(rand_r(seed) % 40), 256};
    return (struct regime){(uint32_t)(rand_r(seed) % 300), 1024};
}

#define DIFFERENTIAL(name, T, INLINE, MAKE, KEY, SET_KEY)                                          \
    static void run_##name(unsigned seed, long operations)                                         \
    {                                                                                              \
        static struct ref_fifo ref;                                                                \
        ref.first = ref.count = 0;                                                                 \
        struct capacity_model model = {INLINE, INLINE, 0};                                         \
        if (QUEUE_VARIANT == QUEUE_VARIANT_RING)                                                   \
            model.capacity = 0;                                                                    \
        struct name queues[2], *q = &queues[0];                                                    \
        name##_init(&queues[0]);                                                                   \
        name##_init(&queues[1]);                                                                   \
        uint32_t next_key = 0;                                                                     \
        struct regime regime = {0, 0};                                                             \
        for (long op = 0; op < operations; op++) {                                                 \
            if (--regime.operations <= 0)                                                          \
                regime = pick_regime(&seed);                                                       \
            int dice = rand_r(&seed) % 1000;                                                       \
            bool below = ref.count < regime.target_depth;                                          \
            if (dice < 2) {                                                                        \
                name##_clear(q);                                                                   \
                ref.count = 0;                                                                     \
            } else if (dice < 6) {                                                                 \
                /* Alternate between two objects; the capacity model carries over unchanged. */    \
                struct name *other = q == &queues[0] ? &queues[1] : &queues[0];                    \
                name##_move(other, q);                                                             \
                q = other;                                                                         \
            } else if (dice < 60 && ref.count > 0) {                                               \
                uint32_t key = next_key++;                                                         \
                SET_KEY(name##_front(q), key);                                                     \
                ref.values[ref.first] = key;                                                       \
            } else if ((below ? dice < 900 : dice < 400) && ref.count < REF_MAX - 1) {             \
                T value = MAKE(next_key);                                                          \
                assert_true(name##_push(q, &value));                                               \
                ref_push(&ref, next_key++);                                                        \
                model_after_push(&model, ref.count);                                               \
            } else if (ref.count > 0) {                                                            \
                T out;                                                                             \
                memset(&out, 0, sizeof out);                                                       \
                assert_true(name##_pop(q, &out));                                                  \
                assert_int_equal(KEY(&out), ref_pop(&ref));                                        \
                model_after_pop(&model, ref.count);                                                \
            } else {                                                                               \
                assert_false(name##_pop(q, NULL));                                                 \
            }                                                                                      \
            assert_int_equal(name##_size(q), ref.count);                                           \
            for (uint32_t i = 0; i < ref.count; i++)                                               \
                assert_int_equal(KEY(name##_at(q, i)), ref.values[ref.first + i]);                 \
            model_expect(&model, name##_capacity(q), ref.count);                                   \
        }                                                                                          \
        name##_destroy(&queues[0]);                                                                \
        name##_destroy(&queues[1]);                                                                \
    }

static struct rx_desc make_desc(uint32_t key)
{
    return (struct rx_desc){.buffer_id = (uint16_t)key, .length = key, .offset = 0};
}
static uint32_t desc_key(const struct rx_desc *d)
{
    return d->length;
}
/* In-place update of the front, as the server's parser advances a buffer's offset. */
static void desc_set_key(struct rx_desc *d, uint32_t key)
{
    d->length = key;
    d->offset += 1;
}
static int make_int(uint32_t key)
{
    return (int)key;
}
static uint32_t int_key(const int *v)
{
    return (uint32_t)*v;
}
static void int_set_key(int *v, uint32_t key)
{
    *v = (int)key;
}

DIFFERENTIAL(dq, struct rx_desc, 1, make_desc, desc_key, desc_set_key)
DIFFERENTIAL(dq4, int, 4, make_int, int_key, int_set_key)

/* Long enough to cover every regime many times: 10M operations on the descriptor queue for the
 * inline variant (the one under audit), 2M for the comparison variants. */
static long scaled(long operations)
{
    return QUEUE_VARIANT == QUEUE_VARIANT_INLINE ? operations : operations / 5;
}

static void test_differential_desc(void **state)
{
    (void)state;
    test_alloc_install();
    for (unsigned seed = 1; seed <= 5; seed++)
        run_dq(seed * 7919u, scaled(2000000));
    test_alloc_uninstall_expect_no_leaks();
}

static void test_differential_int_inline4(void **state)
{
    (void)state;
    test_alloc_install();
    for (unsigned seed = 11; seed <= 13; seed++)
        run_dq4(seed * 104729u, scaled(700000));
    test_alloc_uninstall_expect_no_leaks();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differential_desc),
        cmocka_unit_test(test_differential_int_inline4),
    };
    return cmocka_run_group_tests_name(QUEUE_VARIANT_NAME " differential", tests, NULL, NULL);
}
