/* The sampler's seeds: each process draws its own, so no part of a process is blind to sampling
 * (one fixed seed gave every process the same first interval: the first ~330 KB of each went
 * unsampled under sampled:65536b); QAUDIT_SEED makes a run reproducible, forked children
 * included. fixtures/sample_start.c allocates 300 KB in 100-byte blocks in each of 20 children. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define CHILDREN 20

/* Samples at the fixture's site (the site with 100-byte blocks) in one dump. */
static long long samples(json_t *dump)
{
    long long n = 0;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(dump, "sites"), i, s)
    {
        long long allocs = json_integer_value(json_object_get(s, "allocs"));
        if (allocs > 0 && json_integer_value(json_object_get(s, "bytes")) == 100 * allocs)
            n += allocs;
    }
    return n;
}

struct run {
    json_t **dumps;
    size_t count;
};

static struct run run_tree(const char *seed)
{
    fresh_dir();
    char children[16];
    snprintf(children, sizeof children, "%d", CHILDREN);
    const char *argv[] = {FIXTURE("fixture_sample_start"), children, "3000", NULL};
    const char *extra[] = {"QAUDIT_STACKS=sampled:65536b", "QAUDIT_SIGNAL=off", seed, NULL};
    pid_t pid = start(argv, extra);
    assert_int_equal(wait_exit(pid), 0);
    struct run r;
    r.dumps = load_all_dumps(&r.count);
    assert_int_equal(r.count, CHILDREN + 1);
    return r;
}

/* 300 KB each, a sample per 64 KiB on average: about 4.6 samples a process, none with
 * probability e^-4.6 = 1 %. With independent streams at least 15 of 21 processes have one (the
 * chance of fewer is below 1e-12); with one stream for all, every process had the same count. */
static void test_every_process_draws_its_own_stream(void **state)
{
    (void)state;
    struct run r = run_tree(NULL);
    size_t sampled = 0;
    long long first = samples(r.dumps[0]);
    bool all_same = true;
    for (size_t i = 0; i < r.count; i++) {
        sampled += samples(r.dumps[i]) > 0;
        all_same = all_same && samples(r.dumps[i]) == first;
    }
    assert_true(sampled >= 15);
    assert_false(all_same);
    for (size_t i = 0; i < r.count; i++) {
        json_t *config = json_object_get(r.dumps[i], "config");
        assert_false(json_is_true(json_object_get(config, "seed_explicit")));
        for (size_t k = 0; k < i; k++)
            assert_true(num(r.dumps[i], "config.sample_seed") !=
                        num(r.dumps[k], "config.sample_seed"));
    }
    free_dumps(r.dumps, r.count);
    remove_dir();
}

/* QAUDIT_SEED: the same seed gives the same samples in every process of the tree, run after
 * run; the children's streams still differ from one another. */
static void test_an_explicit_seed_reproduces_the_run(void **state)
{
    (void)state;
    long long first[CHILDREN + 1], seeds[CHILDREN + 1];
    for (int round = 0; round < 2; round++) {
        struct run r = run_tree("QAUDIT_SEED=12345");
        long long got[CHILDREN + 1], got_seeds[CHILDREN + 1];
        for (size_t i = 0; i < r.count; i++) {
            /* ordered by the seed each process drew: the same seeds in both rounds */
            got_seeds[i] = num(r.dumps[i], "config.sample_seed");
            got[i] = samples(r.dumps[i]);
            assert_true(json_is_true(
                json_object_get(json_object_get(r.dumps[i], "config"), "seed_explicit")));
        }
        for (size_t i = 0; i < r.count; i++) /* sort by seed */
            for (size_t k = i + 1; k < r.count; k++)
                if (got_seeds[k] < got_seeds[i]) {
                    long long s = got_seeds[i], g = got[i];
                    got_seeds[i] = got_seeds[k], got[i] = got[k];
                    got_seeds[k] = s, got[k] = g;
                }
        for (size_t i = 1; i < r.count; i++)
            assert_true(got_seeds[i] != got_seeds[i - 1]);
        for (size_t i = 0; i < r.count; i++) {
            if (round == 0) {
                first[i] = got[i];
                seeds[i] = got_seeds[i];
            } else {
                assert_int_equal(got_seeds[i], seeds[i]);
                assert_int_equal(got[i], first[i]);
            }
        }
        free_dumps(r.dumps, r.count);
        remove_dir();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_process_draws_its_own_stream),
        cmocka_unit_test(test_an_explicit_seed_reproduces_the_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
