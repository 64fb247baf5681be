/* realloc's edge cases counted as what they are (issue 22): realloc(NULL, n) and
 * reallocarray(NULL, ...) are allocations, realloc(p, 0) and reallocarray(p, 0, ...) frees, an
 * overflowing reallocarray nothing; and resizes split into in place and moved exactly as the
 * program itself saw them (fixture_reallocs compares the pointers). A realloc(p, 0) forwarded
 * without counting its free turns this program's frees 2 -> 1 and leaves a phantom leak. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "harness.h"

/* fixture_reallocs MODE under the preload: its dump, and what it wrote of itself. */
static json_t *run_reallocs(const char *mode, unsigned *in_place, unsigned *moved)
{
    fresh_dir();
    char truth[400];
    snprintf(truth, sizeof truth, "%s/truth", dump_dir);
    const char *argv[] = {FIXTURE("fixture_reallocs"), mode, truth, NULL};
    json_t *d = run_preloaded(argv, NULL);
    FILE *f = fopen(truth, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%u %u", in_place, moved), 2);
    fclose(f);
    return d;
}

static void test_realloc_of_null_allocates_and_to_zero_frees(void **state)
{
    (void)state;
    unsigned in_place, moved;
    json_t *d = run_reallocs("edges", &in_place, &moved);
    assert_int_equal(num(d, "totals.calls.malloc"), 2);
    assert_int_equal(num(d, "totals.allocs"), 2);
    assert_int_equal(num(d, "totals.bytes_requested"), 200);
    assert_int_equal(num(d, "totals.frees"), 2);
    assert_int_equal(num(d, "totals.calls.free"), 2);
    assert_int_equal(num(d, "totals.live_blocks"), 0);
    assert_int_equal(num(d, "totals.live_bytes"), 0);
    assert_int_equal(num(d, "totals.reallocs"), 0);
    assert_int_equal(num(d, "totals.calls.realloc"), 0);
    assert_int_equal(num(d, "totals.calls.reallocarray"), 0);
    assert_int_equal(num(d, "totals.failed_allocs"), 0);
    assert_int_equal(in_place + moved, 0);
    json_decref(d);
    remove_dir();
}

static void test_resizes_in_place_and_moved_as_the_program_saw(void **state)
{
    (void)state;
    unsigned in_place, moved;
    json_t *d = run_reallocs("moves", &in_place, &moved);
    assert_int_equal(in_place + moved, 12);
    assert_true(in_place > 0 && moved > 0); /* both outcomes met (the fixture checks too) */
    assert_int_not_equal(in_place, moved);  /* so that the two swapped would show */
    assert_int_equal(num(d, "totals.reallocs_in_place"), in_place);
    assert_int_equal(num(d, "totals.reallocs_moved"), moved);
    assert_int_equal(num(d, "totals.reallocs"), 12);
    assert_int_equal(num(d, "totals.calls.realloc"), 12);
    assert_int_equal(num(d, "totals.calls.malloc"), 16);
    assert_int_equal(num(d, "totals.frees"), 16);
    assert_int_equal(num(d, "totals.live_bytes"), 0);
    json_decref(d);
    remove_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_realloc_of_null_allocates_and_to_zero_frees),
        cmocka_unit_test(test_resizes_in_place_and_moved_as_the_program_saw),
    };
    return cmocka_run_group_tests_name("reallocs", tests, NULL, NULL);
}
