/* Folded stacks (`--format folded`) on a report built by hand: frames root first, an inlined
 * function after the one it was inlined into, a wrapper inlined at the leaf folded, frames
 * without symbols named module+0xoffset, stacks that read the same merged into one sorted line,
 * names that would break the format mended, counts by allocations, bytes or live bytes, sampled
 * sites' estimates rounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_fixture.h"

/* Two sites in parse (its inlined xmalloc folded) that differ only in offsets within functions,
 * a site without a stack, a sampled site with an awkward name, one whose estimate rounds to 0. */
static struct report *example_report(void)
{
    struct report *r = hand_report(5);
    struct report_frame a[] = {hand_frame(0, 0x10, "xmalloc", "parse", 9),
                               hand_frame(0, 0x20, NULL, "main", 9),
                               hand_frame(1, 0x30, NULL, NULL, 0)};
    hand_site(r, a, 3, 3, 300, 100, false);
    struct report_frame b[] = {hand_frame(0, 0x11, "xmalloc", "parse", 9),
                               hand_frame(0, 0x21, NULL, "main", 9),
                               hand_frame(1, 0x30, NULL, NULL, 0)};
    hand_site(r, b, 3, 2, 50, 0, false);
    hand_site(r, NULL, 0, 1, 8, 0, false);
    struct report_frame d[] = {hand_frame(0, 0x40, "inner", "odd;name\nhere", 9),
                               hand_frame(0, 0x50, NULL, "main", 9)};
    hand_site(r, d, 2, 2.6, 10.4, 0, true);
    struct report_frame e[] = {hand_frame(0, 0x60, NULL, "rare", 9)};
    hand_site(r, e, 1, 0.2, 0.4, 0, true);
    return r;
}

static void by_allocations(void **state)
{
    (void)state;
    struct report *r = example_report();
    char *text = render_weighted(r, REPORT_FOLDED, WEIGHT_ALLOCS);
    assert_string_equal(text, "(no stack) 1\n"
                              "libc.so.6+0x30;main;parse 5\n"
                              "main;odd:name:here;inner 3\n");
    free(text);
    hand_report_free(r);
}

static void by_bytes_and_live_bytes(void **state)
{
    (void)state;
    struct report *r = example_report();
    char *bytes = render_weighted(r, REPORT_FOLDED, WEIGHT_BYTES);
    assert_string_equal(bytes, "(no stack) 8\n"
                               "libc.so.6+0x30;main;parse 350\n"
                               "main;odd:name:here;inner 10\n");
    free(bytes);
    char *live = render_weighted(r, REPORT_FOLDED, WEIGHT_LIVE);
    assert_string_equal(live, "libc.so.6+0x30;main;parse 100\n");
    free(live);
    hand_report_free(r);
}

static void weight_names(void **state)
{
    (void)state;
    enum report_weight w;
    assert_true(report_weight_parse("bytes", &w) && w == WEIGHT_BYTES);
    assert_true(report_weight_parse("live", &w) && w == WEIGHT_LIVE);
    assert_true(report_weight_parse("allocs", &w) && w == WEIGHT_ALLOCS);
    assert_false(report_weight_parse("objects", &w));
    enum report_format f;
    assert_true(report_format_parse("folded", &f) && f == REPORT_FOLDED);
    assert_true(report_format_parse("pprof", &f) && f == REPORT_PPROF);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(by_allocations),
        cmocka_unit_test(by_bytes_and_live_bytes),
        cmocka_unit_test(weight_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
