/* Memory over time: the dump's `timeline` follows live bytes and the resident set at the period
 * QAUDIT_TIMELINE sets, stays bounded by thinning (never by dropping its end), and ends at the
 * dump; on Debian's python3 too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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

/* A process in steady state (fixture_steady: 4 KiB allocated and freed every millisecond, 100
 * bytes kept every 20 ms, for STEADY_MS) gets its points at the period, however it allocates and
 * whoever takes them: at least a quarter of what its life (as the fixture measured it) allows at
 * a 20 ms period, and never more than the period allows over the dump's life; the slow leak shows
 * in them. Before the looks (output/looks.c) such a process had 2 points, at its start and its
 * exit: its live bytes never moved a batch, so nothing started its writer. */
#define STEADY_MS 1000
#define STEADY_PERIOD_MS 20

static long long median_live(json_t *timeline, size_t from, size_t to)
{
    long long v[1100];
    size_t n = 0;
    for (size_t i = from; i < to && n < 1100; i++)
        v[n++] = num(json_array_get(timeline, i), "live_bytes");
    for (size_t i = 1; i < n; i++) /* insertion sort: a few dozen points */
        for (size_t k = i; k > 0 && v[k - 1] > v[k]; k--) {
            long long x = v[k];
            v[k] = v[k - 1];
            v[k - 1] = x;
        }
    return n ? v[n / 2] : -1;
}

static void assert_steady_points(const char *call, const char *child, const char *stacks)
{
    fresh_dir();
    char ms[16], stacks_setting[64], out[512];
    snprintf(ms, sizeof ms, "%d", STEADY_MS);
    snprintf(stacks_setting, sizeof stacks_setting, "QAUDIT_STACKS=%s", stacks);
    const char *argv[] = {FIXTURE("fixture_steady"), ms, call, child, NULL};
    const char *env[] = {"QAUDIT_TIMELINE=20", stacks_setting, NULL};
    struct captured_run run = {.argv = argv, .extra = env, .preload = true};
    int status = run_captured(&run, out, sizeof out);
    int pid = 0;
    long life_ms = 0, kept = 0;
    if (status != 0 || sscanf(out, "pid=%d life_ms=%ld kept=%ld", &pid, &life_ms, &kept) != 3)
        fail_msg("fixture_steady %s %s exit %d: %s", call, child ? child : "", status, out);
    json_t *d = load_pid(pid);
    json_t *timeline = json_object_get(d, "timeline");
    size_t count = json_array_size(timeline);
    long long dump_life_ms =
        (num(d, "process.dump_time_ns") - num(d, "process.start_time_ns")) / 1000000;
    assert_int_equal(num(d, "timeline_period_ns"), STEADY_PERIOD_MS * 1000000);
    /* At least an eighth of the periods of the fixture's life: the failure this holds against
     * is 2 or 3 points (the writer never started); a writer starved on a loaded machine (13 of
     * 58 periods under three make tests at once) still takes far more. */
    if ((long)count < life_ms / STEADY_PERIOD_MS / 8 ||
        (long long)count > dump_life_ms / STEADY_PERIOD_MS + 2)
        fail_msg("%s %s, stacks %s: %zu points over %ld ms (the dump's life %lld ms) at a %d ms "
                 "period; writer %s",
                 call, child ? child : "", stacks, count, life_ms, dump_life_ms, STEADY_PERIOD_MS,
                 str_at(d, "timeline_writer", "state"));
    const char *writer = str_at(d, "timeline_writer", "state");
    const char *want = !child                            ? "running"
                       : strcmp(child, "nothreads") == 0 ? "failed"
                       : strcmp(child, "forker") == 0    ? "waiting"
                                                         : "running";
    if (writer == NULL || strcmp(writer, want) != 0)
        fail_msg("timeline_writer.state %s, not %s", writer ? writer : "absent", want);
    const char *threads = strstr(out, "threads=");
    if (threads != NULL && strcmp(threads, "threads=1\n") != 0)
        fail_msg("a process that forks children has a second thread: %s", out);
    /* The leak: the last quarter's median above the first quarter's (a point taken while a
     * 4 KiB block was live is one point, not a median). */
    long long first = median_live(timeline, 0, count / 4),
              last = median_live(timeline, count - count / 4, count);
    if (last <= first)
        fail_msg("the slow leak does not show: median live %lld in the first quarter, %lld in "
                 "the last (%ld blocks of 100 bytes kept)",
                 first, last, kept);
    json_decref(d);
    remove_dir();
}

static void test_timeline_steady_state_fast_path(void **state)
{
    (void)state;
    assert_steady_points("malloc", NULL, "off");
}

static void test_timeline_steady_state_every_stack(void **state)
{
    (void)state;
    assert_steady_points("malloc", NULL, "always");
}

static void test_timeline_steady_state_calloc(void **state)
{
    (void)state;
    assert_steady_points("calloc", NULL, "off");
}

static void test_timeline_steady_state_posix_memalign(void **state)
{
    (void)state;
    assert_steady_points("posix_memalign", NULL, "sampled:64");
}

/* A prefork server's worker: a forked child of a process that had a thread (its glibc flag says
 * "threaded" for good), with every stack (qaudit run's default) and on the fast path. */
static void test_timeline_steady_state_forked_child(void **state)
{
    (void)state;
    assert_steady_points("malloc", "child", "always");
    assert_steady_points("malloc", "child", "off");
}

/* A process that forks children (a prefork master, a shell; fixture_steady forker: a child every
 * 50 ms) keeps one thread, as natively, so that its forks never take glibc's multi-threaded path:
 * its allocating thread takes its points at the period. */
static void test_timeline_forking_process_keeps_one_thread(void **state)
{
    (void)state;
    assert_steady_points("malloc", "forker", "off");
    assert_steady_points("malloc", "forker", "always");
}

/* A daemon that allocates a burst at its start and then rarely (fixture_steady sparse: two
 * allocations after the burst, then none): its first allocation past the writer's delay starts
 * the writer, which takes its points at the period to the end. */
static void test_timeline_sparse_after_a_burst(void **state)
{
    (void)state;
    assert_steady_points("malloc", "sparse", "off");
}

/* A process whose writer thread cannot start (clone3 fails: out of threads): the allocating
 * thread takes the points at the period, and the dump says the writer failed. Before, such a
 * process had no point but its dump's. */
static void test_timeline_without_a_writer(void **state)
{
    (void)state;
    assert_steady_points("malloc", "nothreads", "off");
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
        cmocka_unit_test(test_timeline_steady_state_fast_path),
        cmocka_unit_test(test_timeline_steady_state_every_stack),
        cmocka_unit_test(test_timeline_steady_state_calloc),
        cmocka_unit_test(test_timeline_steady_state_posix_memalign),
        cmocka_unit_test(test_timeline_steady_state_forked_child),
        cmocka_unit_test(test_timeline_forking_process_keeps_one_thread),
        cmocka_unit_test(test_timeline_sparse_after_a_burst),
        cmocka_unit_test(test_timeline_without_a_writer),
        cmocka_unit_test(test_timeline_off),
        cmocka_unit_test(test_timeline_of_python),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
