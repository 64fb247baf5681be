/* A delta between two dumps of one process (report_load_delta, what qaudit serve's ?seconds=S
 * profiles show) tells the window, not the process's whole life: its size histograms, precision
 * counters and the figures its notes quote are the later dump's less the earlier's, floored at
 * 0; equal dumps give zeros; notes that cannot apply to a window (no final dump, the peak) are
 * left out. Two variants of the example dump, 3 s apart, with every figure set here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <jansson.h>

#include "report_fixture.h"

#define SECONDS_APART 3000000000ll

struct figures {
    json_int_t allocs, small, truncated, untracked, sites_dropped, usable_dropped, unwritten;
    json_int_t threads, peak_within;
    bool exact;
};

static void set(json_t *object, const char *key, json_int_t value)
{
    json_object_set_new(object, key, json_integer(value));
}

/* The example dump (one site, requested 17-32, 81-96 and 177-192 once each) as a snapshot of a
 * running process taken `later` s after the example's time, with f's figures: its allocations,
 * the 17-32 bucket's count (and usable 40's), the precision counters. */
static const char *dump_with(const struct figures *f, int later, const char *exe, const char *name)
{
    json_t *doc = example();
    json_object_set_new(doc, "reason", json_string("snapshot"));
    json_t *process = json_object_get(doc, "process");
    json_int_t dumped = json_integer_value(json_object_get(process, "dump_time_ns"));
    set(process, "dump_time_ns", dumped + later * SECONDS_APART);
    json_object_set_new(process, "exe", json_string(exe));
    json_t *totals = json_object_get(doc, "totals");
    set(totals, "allocs", f->allocs);
    set(totals, "frees", f->allocs);
    set(totals, "threads", f->threads);
    set(json_object_get(totals, "calls"), "malloc", f->allocs);
    set(json_array_get(json_object_get(doc, "requested_sizes"), 0), "count", f->small);
    set(json_array_get(json_object_get(doc, "usable_sizes"), 0), "count", f->small);
    json_t *precision = json_object_get(doc, "precision");
    json_object_set_new(precision, "exact", json_boolean(f->exact));
    set(precision, "stacks_truncated", f->truncated);
    set(precision, "blocks_untracked", f->untracked);
    set(precision, "sites_dropped", f->sites_dropped);
    set(precision, "usable_sizes_dropped", f->usable_dropped);
    set(precision, "never_written_unattributed", f->unwritten);
    set(precision, "peak_live_bytes_within", f->peak_within);
    const char *path = write_doc(doc, name);
    json_decref(doc);
    return path;
}

static struct report delta(const char *earlier, const char *later)
{
    struct report r;
    memset(&r, 0, sizeof r);
    const struct report_load_settings s = {.symbols = false};
    char error[512];
    if (!report_load_delta(earlier, later, &s, &r, error, sizeof error))
        fail_msg("%s", error);
    return r;
}

static struct report whole(const char *path)
{
    struct report r;
    memset(&r, 0, sizeof r);
    char error[512];
    if (report_load(&path, 1, &r, error, sizeof error) != REPORT_OK)
        fail_msg("%s", error);
    return r;
}

/* The note that contains needle, or NULL. */
static const char *note_with(const struct report *r, const char *needle)
{
    for (size_t i = 0; i < r->trust.note_count; i++)
        if (strstr(r->trust.notes[i], needle) != NULL)
            return r->trust.notes[i];
    return NULL;
}

static uint64_t requested(const struct report *r, uint64_t from)
{
    for (size_t i = 0; i < r->requested_count; i++)
        if (r->requested_sizes[i].from == from)
            return r->requested_sizes[i].count;
    return 0;
}

static uint64_t usable(const struct report *r, uint64_t key)
{
    for (size_t i = 0; i < r->usable_count; i++)
        if (r->usable_sizes[i].key == key)
            return r->usable_sizes[i].count;
    return 0;
}

/* Every counter the window takes from the dumps is 0. */
static void assert_nothing_counted(const struct report *r)
{
    assert_int_equal(r->totals.allocs, 0);
    assert_int_equal(r->precision.stacks_truncated, 0);
    assert_int_equal(r->precision.blocks_untracked, 0);
    assert_int_equal(r->precision.sites_dropped, 0);
    assert_int_equal(r->precision.usable_sizes_dropped, 0);
    assert_int_equal(r->precision.never_written_unattributed, 0);
    assert_int_equal(requested(r, 17), 0);
    assert_int_equal(usable(r, 40), 0);
    assert_int_equal(r->processes[0].small_allocs, 0);
}

static const struct figures before = {.allocs = 519455,
                                      .small = 900,
                                      .truncated = 2397,
                                      .untracked = 5,
                                      .sites_dropped = 3,
                                      .usable_dropped = 2,
                                      .unwritten = 50,
                                      .threads = 1};
static const struct figures after = {.allocs = 1033660,
                                     .small = 929,
                                     .truncated = 2427,
                                     .untracked = 7,
                                     .sites_dropped = 4,
                                     .usable_dropped = 9,
                                     .unwritten = 80,
                                     .threads = 1};

static void the_window_is_the_later_less_the_earlier(void **state)
{
    (void)state;
    const char *a = dump_with(&before, 0, "/bin/prog", "a.json");
    struct report r = delta(a, dump_with(&after, 1, "/bin/prog", "b.json"));
    assert_int_equal(r.totals.allocs, 514205);
    assert_int_equal(r.precision.stacks_truncated, 30);
    assert_int_equal(r.precision.blocks_untracked, 2);
    assert_int_equal(r.precision.sites_dropped, 1);
    assert_int_equal(r.precision.usable_sizes_dropped, 7);
    assert_int_equal(r.precision.never_written_unattributed, 30);
    assert_int_equal(requested(&r, 17), 29);
    assert_int_equal(usable(&r, 40), 29);
    assert_int_equal(r.requested_count, 1); /* 81-96 and 177-192 made nothing in between */
    assert_int_equal(r.usable_count, 1);
    assert_int_equal(r.processes[0].small_allocs, 29);
    assert_int_equal(r.processes[0].alloc_calls, 514205);
    assert_non_null(note_with(&r, "30 stacks were cut"));
    assert_non_null(note_with(&r, "2 blocks did not fit"));
    assert_non_null(note_with(&r, "1 allocations went to the overflow site"));
    assert_non_null(note_with(&r, "7 usable sizes did not fit"));
    report_free(&r);
}

/* pid ... is Python: the share of small calls it quotes is the window's (issue 43's report:
 * "only 929 of its 1,033,660 allocation calls" under a delta of 514,205 calls). */
static void a_python_note_quotes_the_window(void **state)
{
    (void)state;
    const char *a = dump_with(&before, 0, "/usr/bin/python3.11", "py-a.json");
    struct report r = delta(a, dump_with(&after, 1, "/usr/bin/python3.11", "py-b.json"));
    assert_non_null(note_with(&r, "only 29 of its 514,205 allocation calls are that small"));
    assert_null(note_with(&r, "1,033,660"));
    report_free(&r);
}

static void equal_dumps_give_zeros(void **state)
{
    (void)state;
    const char *a = dump_with(&before, 0, "/usr/bin/python3.11", "same-a.json");
    struct report r = delta(a, dump_with(&before, 1, "/usr/bin/python3.11", "same-b.json"));
    assert_nothing_counted(&r);
    assert_int_equal(r.requested_count, 0);
    assert_int_equal(r.usable_count, 0);
    assert_int_equal(r.processes[0].alloc_calls, 0);
    assert_int_equal(r.site_count, 0);
    assert_null(note_with(&r, "stacks were cut"));
    assert_null(note_with(&r, "is Python")); /* no call in the window to judge it by */
    report_free(&r);
}

/* A later dump whose counters are below the earlier's (not of one count: an attach between
 * them, a corrupt dump) gives 0, never a count near 2^64. */
static void a_counter_that_went_down_floors_at_0(void **state)
{
    (void)state;
    const char *a = dump_with(&after, 0, "/bin/prog", "down-a.json");
    struct report r = delta(a, dump_with(&before, 1, "/bin/prog", "down-b.json"));
    assert_nothing_counted(&r);
    report_free(&r);
}

/* The later dump alone is a snapshot of several threads: "no final dump" and the peak's bound
 * are said of it, and of the delta neither (the window is whole between its dumps; it has no
 * peak). */
static void a_delta_says_nothing_of_a_final_dump_or_the_peak(void **state)
{
    (void)state;
    struct figures threaded = after;
    threaded.threads = 4;
    threaded.peak_within = 3 * 65536;
    const char *a = dump_with(&before, 0, "/bin/prog", "t-a.json");
    const char *b = dump_with(&threaded, 1, "/bin/prog", "t-b.json");
    struct report alone = whole(b);
    assert_non_null(note_with(&alone, "has no final dump here"));
    assert_non_null(note_with(&alone, "The peak of live bytes is within"));
    report_free(&alone);
    struct report r = delta(a, b);
    assert_null(note_with(&r, "final dump"));
    assert_null(note_with(&r, "The peak of live bytes"));
    report_free(&r);
}

/* Both dumps inexact for 2 usable sizes dropped before the window: the window drops none, so its
 * note says that nothing counted in it explains the later dump's flag, rather than quoting the 2.
 */
static void an_inexact_later_dump_with_nothing_in_the_window(void **state)
{
    (void)state;
    struct figures inexact = before;
    inexact.exact = false;
    inexact.untracked = inexact.sites_dropped = 0;
    const char *a = dump_with(&inexact, 0, "/bin/prog", "x-a.json");
    struct report r = delta(a, dump_with(&inexact, 1, "/bin/prog", "x-b.json"));
    assert_true(r.trust.partial);
    assert_non_null(note_with(&r, "nothing counted in this window says why"));
    assert_null(note_with(&r, "usable sizes did not fit"));
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_window_is_the_later_less_the_earlier),
        cmocka_unit_test(a_python_note_quotes_the_window),
        cmocka_unit_test(equal_dumps_give_zeros),
        cmocka_unit_test(a_counter_that_went_down_floors_at_0),
        cmocka_unit_test(a_delta_says_nothing_of_a_final_dump_or_the_peak),
        cmocka_unit_test(an_inexact_later_dump_with_nothing_in_the_window),
    };
    return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
