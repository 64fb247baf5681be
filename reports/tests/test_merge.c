/* Merging dumps of different processes, held to figures known by construction: two dumps whose
 * every figure differs (the example dump and a variant of it written here), so that a merge that
 * keeps one side, or adds the wrong one, shows; precision exact only when every dump is; and a
 * pid seen twice with another start time is two processes (pid reuse, two hosts), not a snapshot
 * superseded by a later dump. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <jansson.h>

#include "report_fixture.h"

/* The example dump (pid 27928: 3 allocations, 3 frees, 320 bytes; one connection at peak depth
 * 9 with 2 allocations of 288 bytes; one request each of 17-32, 81-96 and 177-192 bytes) as
 * another process wrote it: pid, start time and every figure below changed. */
static json_t *other_process(json_int_t pid, json_int_t start_delta, bool exact)
{
    json_t *doc = example();
    json_t *process = json_object_get(doc, "process");
    json_object_set_new(process, "pid", json_integer(pid));
    json_int_t start = json_integer_value(json_object_get(process, "start_time_ns"));
    json_int_t dumped = json_integer_value(json_object_get(process, "dump_time_ns"));
    json_object_set_new(process, "start_time_ns", json_integer(start + start_delta));
    json_object_set_new(process, "dump_time_ns", json_integer(dumped + start_delta));
    json_t *totals = json_object_get(doc, "totals");
    json_object_set_new(totals, "allocs", json_integer(5));
    json_object_set_new(totals, "frees", json_integer(4));
    json_object_set_new(totals, "live_blocks", json_integer(1));
    json_object_set_new(totals, "live_bytes", json_integer(100));
    json_object_set_new(totals, "bytes_requested", json_integer(1000));
    json_t *group =
        json_array_get(json_object_get(json_object_get(doc, "queues"), "by_peak_depth"), 0);
    json_object_set_new(group, "allocs", json_integer(7));
    json_object_set_new(group, "bytes", json_integer(700));
    json_t *bucket = json_array_get(json_object_get(doc, "requested_sizes"), 0); /* 17-32 */
    json_object_set_new(bucket, "count", json_integer(4));
    json_object_set_new(json_object_get(doc, "precision"), "exact", json_boolean(exact));
    return doc;
}

static struct report load_two(const char *first, const char *second)
{
    struct report r;
    memset(&r, 0, sizeof r);
    const char *paths[] = {first, second};
    char error[512];
    if (report_load(paths, 2, &r, error, sizeof error) != REPORT_OK)
        fail_msg("%s", error);
    return r;
}

static uint64_t bucket_count(const struct report *r, uint64_t from)
{
    for (size_t i = 0; i < r->requested_count; i++)
        if (r->requested_sizes[i].from == from)
            return r->requested_sizes[i].count;
    return 0;
}

static void every_figure_of_two_processes_is_added(void **state)
{
    (void)state;
    json_t *other = other_process(4242, 0, true);
    struct report r = load_two(EXAMPLE_DUMP, write_doc(other, "other.json"));
    assert_int_equal(r.process_count, 2);
    assert_int_equal(r.totals.allocs, 3 + 5);
    assert_int_equal(r.totals.frees, 3 + 4);
    assert_int_equal(r.totals.live_blocks, 0 + 1);
    assert_int_equal(r.totals.live_bytes, 0 + 100);
    assert_int_equal(r.totals.bytes_requested, 320 + 1000);
    assert_int_equal(r.queues.by_peak_depth_count, 1);
    assert_int_equal(r.queues.by_peak_depth[0].connections, 1 + 1);
    assert_int_equal(r.queues.by_peak_depth[0].allocs, 2 + 7);
    assert_int_equal(r.queues.by_peak_depth[0].bytes, 288 + 700);
    assert_int_equal(bucket_count(&r, 17), 1 + 4);
    assert_int_equal(bucket_count(&r, 81), 1 + 1);
    assert_int_equal(bucket_count(&r, 177), 1 + 1);
    report_free(&r);
    json_decref(other);
}

/* One dump that is not exact makes the merge not exact, whichever comes first. */
static void exact_only_when_every_dump_is(void **state)
{
    (void)state;
    json_t *other = other_process(4242, 0, false);
    const char *inexact = write_doc(other, "inexact.json");
    struct report r = load_two(EXAMPLE_DUMP, inexact);
    assert_false(r.precision.exact);
    assert_true(r.trust.partial);
    report_free(&r);
    r = load_two(inexact, EXAMPLE_DUMP);
    assert_false(r.precision.exact);
    assert_true(r.trust.partial);
    report_free(&r);
    json_decref(other);
    other = other_process(4242, 0, true);
    r = load_two(EXAMPLE_DUMP, write_doc(other, "exact.json"));
    assert_true(r.precision.exact);
    assert_false(r.trust.partial);
    report_free(&r);
    json_decref(other);
}

/* The same pid started a second later is another process image: both are counted. */
static void a_reused_pid_is_another_process(void **state)
{
    (void)state;
    json_t *other = other_process(27928, 1000000000, true);
    struct report r = load_two(EXAMPLE_DUMP, write_doc(other, "reused.json"));
    assert_int_equal(r.process_count, 2);
    assert_int_equal(r.superseded, 0);
    assert_int_equal(r.duplicates, 0);
    assert_int_equal(r.totals.allocs, 3 + 5);
    report_free(&r);
    json_decref(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_figure_of_two_processes_is_added),
        cmocka_unit_test(exact_only_when_every_dump_is),
        cmocka_unit_test(a_reused_pid_is_another_process),
    };
    return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
