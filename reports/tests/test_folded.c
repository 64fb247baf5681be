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

#include "reports/render.h"
#include "reports/report.h"

static struct report_frame frame(uint32_t module, uint64_t offset, const char *inlined,
                                 const char *function)
{
    struct report_frame f = {module, offset, NULL, 0};
    f.locations = calloc(2, sizeof *f.locations);
    if (inlined != NULL)
        f.locations[f.location_count++] =
            (struct report_location){strdup(inlined), strdup("a.c"), 3, true};
    if (function != NULL)
        f.locations[f.location_count++] =
            (struct report_location){strdup(function), strdup("a.c"), 9, false};
    return f;
}

static void add_site(struct report *r, struct report_frame *frames, size_t n, double allocs,
                     double bytes, double live, bool estimated)
{
    struct report_site *s = &r->sites[r->site_count++];
    s->stack.frames = calloc(n + 1, sizeof *frames);
    if (n > 0) /* a site without a stack passes no frames */
        memcpy(s->stack.frames, frames, n * sizeof *frames);
    s->stack.frame_count = n;
    s->allocs = (uint64_t)allocs;
    s->bytes = (uint64_t)bytes;
    s->live_bytes = (uint64_t)live;
    s->estimated = estimated;
    s->est.allocs = allocs;
    s->est.bytes = bytes;
    s->est.live_bytes = live;
}

/* Two sites in parse (its inlined xmalloc folded) that differ only in offsets within functions,
 * a site without a stack, a sampled site with an awkward name, one whose estimate rounds to 0. */
static struct report *example_report(void)
{
    struct report *r = calloc(1, sizeof *r);
    r->modules = calloc(2, sizeof *r->modules);
    r->modules[0] = (struct report_module){
        .path = strdup("/bin/prog"), .build_id = strdup(""), .is_main = true};
    r->modules[1] =
        (struct report_module){.path = strdup("/lib/libc.so.6"), .build_id = strdup("")};
    r->module_count = 2;
    r->sites = calloc(5, sizeof *r->sites);
    r->symbolized = true;
    const char *globs[] = {"xmalloc"};
    report_fold(r, globs, 1);
    struct report_frame a[] = {frame(0, 0x10, "xmalloc", "parse"), frame(0, 0x20, NULL, "main"),
                               frame(1, 0x30, NULL, NULL)};
    add_site(r, a, 3, 3, 300, 100, false);
    struct report_frame b[] = {frame(0, 0x11, "xmalloc", "parse"), frame(0, 0x21, NULL, "main"),
                               frame(1, 0x30, NULL, NULL)};
    add_site(r, b, 3, 2, 50, 0, false);
    add_site(r, NULL, 0, 1, 8, 0, false);
    struct report_frame d[] = {frame(0, 0x40, "inner", "odd;name\nhere"),
                               frame(0, 0x50, NULL, "main")};
    add_site(r, d, 2, 2.6, 10.4, 0, true);
    struct report_frame e[] = {frame(0, 0x60, NULL, "rare")};
    add_site(r, e, 1, 0.2, 0.4, 0, true);
    return r;
}

static char *folded(const struct report *r, enum report_weight weight)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    struct report_options options = {.top = 10, .cacheline = 64, .weight = weight};
    report_render(out, r, REPORT_FOLDED, &options);
    fclose(out);
    return text;
}

static void by_allocations(void **state)
{
    (void)state;
    struct report *r = example_report();
    char *text = folded(r, WEIGHT_ALLOCS);
    assert_string_equal(text, "(no stack) 1\n"
                              "libc.so.6+0x30;main;parse 5\n"
                              "main;odd:name:here;inner 3\n");
    free(text);
    report_free(r);
    free(r);
}

static void by_bytes_and_live_bytes(void **state)
{
    (void)state;
    struct report *r = example_report();
    char *bytes = folded(r, WEIGHT_BYTES);
    assert_string_equal(bytes, "(no stack) 8\n"
                               "libc.so.6+0x30;main;parse 350\n"
                               "main;odd:name:here;inner 10\n");
    free(bytes);
    char *live = folded(r, WEIGHT_LIVE);
    assert_string_equal(live, "libc.so.6+0x30;main;parse 100\n");
    free(live);
    report_free(r);
    free(r);
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
