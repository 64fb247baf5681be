/* Memory over time: the dump's `timeline` follows live bytes and the resident set at the period
 * QAUDIT_TIMELINE sets, stays bounded by thinning (never by dropping its end), and ends at the
 * dump; on Debian's python3 too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "harness.h"

#define MIB (1ll << 20)

struct series {
    size_t count;
    long long first_time, last_time, peak_live, peak_rss, last_live;
    bool ordered; /* times never go back */
};

static struct series read_series(json_t *dump)
{
    struct series s = {.ordered = true};
    json_t *timeline = json_object_get(dump, "timeline"), *point;
    size_t i;
    json_array_foreach(timeline, i, point)
    {
        long long time = num(point, "time_ns"), live = num(point, "live_bytes");
        if (i == 0)
            s.first_time = time;
        s.ordered = s.ordered && time >= s.last_time;
        s.last_time = time;
        s.last_live = live;
        if (live > s.peak_live)
            s.peak_live = live;
        if (num(point, "rss_bytes") > s.peak_rss)
            s.peak_rss = num(point, "rss_bytes");
    }
    s.count = json_array_size(timeline);
    return s;
}

/* 64 MiB held 400 ms at a 20 ms period: points before, during and after the peak; the peak's
 * live bytes are the program's 64 MiB and resident; the last point is the dump's moment, with
 * nothing live. */
static void test_timeline_follows_live_and_resident_memory(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_timeline"), "64", "400", NULL};
    const char *env[] = {"QAUDIT_TIMELINE=20", NULL};
    json_t *d = run_preloaded(argv, env);
    struct series s = read_series(d);
    assert_true(s.count >= 3);
    assert_true(s.ordered);
    assert_int_equal(num(d, "timeline_period_ns"), 20000000);
    assert_in_range(s.peak_live, 64 * MIB, 65 * MIB);
    assert_true(s.peak_rss >= 64 * MIB);
    assert_true(s.last_live < MIB);
    assert_int_equal(s.last_time, num(d, "process.dump_time_ns"));
    assert_true(s.peak_live <= num(d, "totals.peak_live_bytes"));
    json_decref(d);
    remove_dir();
}

/* A 1 ms period over about 2.4 s: more points than the series holds, so it is thinned (every
 * other point, the period doubled) and still starts before the peak and ends at the dump. The
 * writer thread takes them: QAUDIT_INTERVAL has it start at once (without, this program, which
 * allocates only at its start and frees its blocks, would never start it, and its series would
 * hold its moves only, taken as they happen: test_timeline_shows_memory_held_between_its_periods).
 */
static void test_timeline_thins_rather_than_drops_its_end(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_timeline"), "8", "1200", NULL};
    const char *env[] = {"QAUDIT_TIMELINE=1", "QAUDIT_INTERVAL=3600", NULL};
    json_t *d = run_preloaded(argv, env);
    struct series s = read_series(d);
    assert_true(s.count <= 1025); /* 1,024 kept points and the dump's own */
    assert_true(num(d, "timeline_period_ns") >= 2000000);
    assert_true(s.first_time - num(d, "process.start_time_ns") < 1000000000);
    assert_int_equal(s.last_time, num(d, "process.dump_time_ns"));
    assert_in_range(s.peak_live, 8 * MIB, 9 * MIB);
    json_decref(d);
    remove_dir();
}

/* With a period longer than the run, no due point could show the 8 MiB the program held for
 * 300 ms: the points taken as the live bytes move by an eighth and a MiB can. The program
 * allocates only at its start and frees later, so its writer thread (started lazily, at a malloc
 * past QAUDIT_WRITER_LAZY_MS) mostly never runs and the allocating thread takes them; on a busy
 * machine the writer may start during the allocations and is woken for them. */
static void test_timeline_shows_memory_held_between_its_periods(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_timeline"), "8", "300", NULL};
    const char *env[] = {"QAUDIT_TIMELINE=10000", NULL};
    json_t *d = run_preloaded(argv, env);
    struct series s = read_series(d);
    assert_true(s.ordered);
    assert_in_range(s.peak_live, 8 * MIB, 9 * MIB);
    assert_true(s.peak_rss >= 8 * MIB);
    assert_true(s.count >= 3); /* the start, the 8 MiB held, the dump's */
    assert_true(s.last_live < MIB);
    assert_int_equal(s.last_time, num(d, "process.dump_time_ns"));
    json_decref(d);
    remove_dir();
}

/* Threads whose live bytes each stay below the batch they publish peaks in: the series' exact
 * sums still never exceed the dump's peak (a point raises it). */
static void test_timeline_never_exceeds_the_peak(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_threads"), "4", "20000", NULL};
    const char *env[] = {"QAUDIT_TIMELINE=1", NULL};
    json_t *d = run_preloaded(argv, env);
    struct series s = read_series(d);
    assert_true(s.count >= 2);
    assert_true(s.peak_live <= num(d, "totals.peak_live_bytes"));
    json_decref(d);
    remove_dir();
}

/* QAUDIT_TIMELINE=off: no series and no thread for it. */
static void test_timeline_off(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_timeline"), "1", "10", NULL};
    const char *env[] = {"QAUDIT_TIMELINE=off", NULL};
    json_t *d = run_preloaded(argv, env);
    assert_null(json_object_get(d, "timeline"));
    assert_int_equal(num(d, "config.timeline_ms"), 0);
    json_decref(d);
    remove_dir();
}

/* Debian's python3 holding a 48 MiB bytearray: the series shows it live and resident. */
static void test_timeline_of_python(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {"/usr/bin/python3", "-c",
                          "import time; x = bytearray(48 << 20); time.sleep(0.5); del x; "
                          "time.sleep(0.2)",
                          NULL};
    const char *env[] = {"QAUDIT_TIMELINE=20", NULL};
    json_t *d = run_preloaded(argv, env);
    struct series s = read_series(d);
    assert_true(s.peak_live >= 48 * MIB);
    assert_true(s.peak_rss >= 48 * MIB);
    assert_true(s.last_live < 16 * MIB);
    json_decref(d);
    remove_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeline_follows_live_and_resident_memory),
        cmocka_unit_test(test_timeline_thins_rather_than_drops_its_end),
        cmocka_unit_test(test_timeline_shows_memory_held_between_its_periods),
        cmocka_unit_test(test_timeline_never_exceeds_the_peak),
        cmocka_unit_test(test_timeline_off),
        cmocka_unit_test(test_timeline_of_python),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
