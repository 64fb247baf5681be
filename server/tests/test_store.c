/* The sharded store: values, binary keys, SET modes, expiry, INCR, deletion, growth and shrink
 * while reading, and two threads writing while tables resize. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "store.h"

struct value_copy {
    char bytes[256];
    size_t len;
};

static bool capture(void *ctx, const char *value, size_t len)
{
    struct value_copy *copy = ctx;
    copy->len = len;
    memcpy(copy->bytes, value, len < sizeof copy->bytes ? len : sizeof copy->bytes);
    return true;
}

static void expect_stored(struct store *s, const char *key, size_t klen, const char *value,
                          size_t vlen, int64_t now)
{
    struct value_copy copy = {0};
    assert_int_equal(store_get(s, key, klen, now, capture, &copy), STORE_OK);
    assert_int_equal(copy.len, vlen);
    assert_memory_equal(copy.bytes, value, vlen);
}

static void expect_absent(struct store *s, const char *key, size_t klen, int64_t now)
{
    struct value_copy copy;
    assert_int_equal(store_get(s, key, klen, now, capture, &copy), STORE_NOT_FOUND);
}

static void test_set_get_binary(void **state)
{
    (void)state;
    struct store *s = store_create();
    static const char key[] = {'a', 0, 'b', '\r', '\n'};
    static const char value[] = {0, 1, 2, 0, 'x'};
    assert_int_equal(store_set(s, key, sizeof key, value, sizeof value, 0, STORE_SET_ALWAYS, 1),
                     STORE_OK);
    expect_stored(s, key, sizeof key, value, sizeof value, 1);
    expect_absent(s, key, 1, 1); /* "a" is another key */
    assert_int_equal(store_set(s, key, sizeof key, "new", 3, 0, STORE_SET_ALWAYS, 1), STORE_OK);
    expect_stored(s, key, sizeof key, "new", 3, 1);
    assert_int_equal(store_set(s, "", 0, "", 0, 0, STORE_SET_ALWAYS, 1), STORE_OK);
    expect_stored(s, "", 0, "", 0, 1);
    struct store_stats stats;
    store_stats(s, &stats);
    assert_int_equal(stats.keys, 2);
    store_destroy(s);
}

static void test_set_modes_and_delete(void **state)
{
    (void)state;
    struct store *s = store_create();
    assert_int_equal(store_set(s, "k", 1, "1", 1, 0, STORE_SET_IF_PRESENT, 1), STORE_NOT_FOUND);
    assert_int_equal(store_set(s, "k", 1, "1", 1, 0, STORE_SET_IF_ABSENT, 1), STORE_OK);
    assert_int_equal(store_set(s, "k", 1, "2", 1, 0, STORE_SET_IF_ABSENT, 1), STORE_EXISTS);
    assert_int_equal(store_set(s, "k", 1, "3", 1, 0, STORE_SET_IF_PRESENT, 1), STORE_OK);
    expect_stored(s, "k", 1, "3", 1, 1);
    assert_true(store_exists(s, "k", 1, 1));
    assert_true(store_delete(s, "k", 1, 1));
    assert_false(store_delete(s, "k", 1, 1));
    assert_false(store_exists(s, "k", 1, 1));
    store_destroy(s);
}

static void test_expiry(void **state)
{
    (void)state;
    struct store *s = store_create();
    assert_int_equal(store_set(s, "t", 1, "v", 1, 1000, STORE_SET_ALWAYS, 500), STORE_OK);
    struct store_stats stats;
    store_stats(s, &stats);
    assert_int_equal(stats.expires, 1);
    expect_stored(s, "t", 1, "v", 1, 999);
    expect_absent(s, "t", 1, 1000);
    assert_false(store_exists(s, "t", 1, 1000));
    store_stats(s, &stats);
    assert_int_equal(stats.keys, 0);
    assert_int_equal(stats.expires, 0);
    /* NX sees an expired key as absent. */
    assert_int_equal(store_set(s, "u", 1, "v", 1, 10, STORE_SET_ALWAYS, 1), STORE_OK);
    assert_int_equal(store_set(s, "u", 1, "w", 1, 0, STORE_SET_IF_ABSENT, 20), STORE_OK);
    expect_stored(s, "u", 1, "w", 1, 30);
    store_destroy(s);
}

static void test_incr(void **state)
{
    (void)state;
    struct store *s = store_create();
    int64_t v;
    assert_int_equal(store_incr(s, "n", 1, 1, 1, &v), STORE_OK);
    assert_int_equal(v, 1);
    assert_int_equal(store_incr(s, "n", 1, 41, 1, &v), STORE_OK);
    assert_int_equal(v, 42);
    expect_stored(s, "n", 1, "42", 2, 1);
    static const char *const bad[] = {"abc", "",   " 1", "+1",
                                      "01",  "-0", "1x", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        store_set(s, "b", 1, bad[i], strlen(bad[i]), 0, STORE_SET_ALWAYS, 1);
        assert_int_equal(store_incr(s, "b", 1, 1, 1, &v), STORE_NOT_INTEGER);
    }
    store_set(s, "m", 1, "9223372036854775807", 19, 0, STORE_SET_ALWAYS, 1);
    assert_int_equal(store_incr(s, "m", 1, 1, 1, &v), STORE_OVERFLOW);
    store_set(s, "neg", 3, "-5", 2, 0, STORE_SET_ALWAYS, 1);
    assert_int_equal(store_incr(s, "neg", 3, 1, 1, &v), STORE_OK);
    assert_int_equal(v, -4);
    store_destroy(s);
}

static int key_of(char *buf, unsigned i)
{
    return snprintf(buf, 32, "key:%u", i);
}

/* Growth to 200k keys and back down, every earlier key readable at every step along the way. */
static void test_growth_and_shrink_while_reading(void **state)
{
    (void)state;
    struct store *s = store_create();
    char key[32], value[32];
    const unsigned n = 200000;
    for (unsigned i = 0; i < n; i++) {
        int k = key_of(key, i);
        int v = snprintf(value, sizeof value, "v%u", i * 7);
        assert_int_equal(store_set(s, key, (size_t)k, value, (size_t)v, 0, STORE_SET_ALWAYS, 1),
                         STORE_OK);
        unsigned probe = (i * 2654435761u) % (i + 1);
        k = key_of(key, probe);
        v = snprintf(value, sizeof value, "v%u", probe * 7);
        expect_stored(s, key, (size_t)k, value, (size_t)v, 1);
        /* Overwrite it with the same value: replacing must work while its shard rehashes. */
        assert_int_equal(store_set(s, key, (size_t)k, value, (size_t)v, 0, STORE_SET_ALWAYS, 1),
                         STORE_OK);
    }
    struct store_stats stats;
    store_stats(s, &stats);
    assert_int_equal(stats.keys, n);
    for (unsigned i = 0; i < n; i += 2) {
        int k = key_of(key, i);
        assert_true(store_delete(s, key, (size_t)k, 1));
    }
    for (unsigned i = 1; i < n; i += 2) {
        int k = key_of(key, i);
        int v = snprintf(value, sizeof value, "v%u", i * 7);
        expect_stored(s, key, (size_t)k, value, (size_t)v, 1);
    }
    store_flush(s);
    store_stats(s, &stats);
    assert_int_equal(stats.keys, 0);
    assert_int_equal(stats.bytes, 0);
    store_destroy(s);
}

struct writer {
    struct store *store;
    unsigned id;
};

/* Each writer owns keys w<id>:<i> and rewrites them; it also reads the other writer's keys. */
static void *write_and_read(void *arg)
{
    struct writer *w = arg;
    char key[32], value[32];
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned i = 0; i < 50000; i++) {
            int k = snprintf(key, sizeof key, "w%u:%u", w->id, i);
            int v = snprintf(value, sizeof value, "%u:%u", round, i);
            if (store_set(w->store, key, (size_t)k, value, (size_t)v, 0, STORE_SET_ALWAYS, 1) !=
                STORE_OK)
                return (void *)1;
            k = snprintf(key, sizeof key, "w%u:%u", 1 - w->id, i);
            struct value_copy copy;
            store_get(w->store, key, (size_t)k, 1, capture, &copy);
        }
    }
    return NULL;
}

static void test_two_threads_while_resizing(void **state)
{
    (void)state;
    struct store *s = store_create();
    struct writer writers[2] = {{s, 0}, {s, 1}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, write_and_read, &writers[i]);
    for (int i = 0; i < 2; i++) {
        void *result;
        pthread_join(threads[i], &result);
        assert_null(result);
    }
    char key[32], value[32];
    for (unsigned id = 0; id < 2; id++)
        for (unsigned i = 0; i < 50000; i++) {
            int k = snprintf(key, sizeof key, "w%u:%u", id, i);
            int v = snprintf(value, sizeof value, "2:%u", i);
            expect_stored(s, key, (size_t)k, value, (size_t)v, 1);
        }
    struct store_stats stats;
    store_stats(s, &stats);
    assert_int_equal(stats.keys, 100000);
    store_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_get_binary),
        cmocka_unit_test(test_set_modes_and_delete),
        cmocka_unit_test(test_expiry),
        cmocka_unit_test(test_incr),
        cmocka_unit_test(test_growth_and_shrink_while_reading),
        cmocka_unit_test(test_two_threads_while_resizing),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
