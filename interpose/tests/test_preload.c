/* libqaudit-preload.so, end to end: fixture programs run under LD_PRELOAD and the dumps they
 * leave are read back (jansson) and checked against what each program is known to do. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

extern char **environ;

static void test_exact_counts(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_exact_counts"), NULL};
    pid_t pid = start(argv, NULL);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    assert_int_equal(num(d, "totals.calls.malloc"), 40);
    assert_int_equal(num(d, "totals.calls.calloc"), 20);
    assert_int_equal(num(d, "totals.calls.realloc"), 10);
    assert_int_equal(num(d, "totals.calls.reallocarray"), 5);
    assert_int_equal(num(d, "totals.calls.posix_memalign"), 5);
    assert_int_equal(num(d, "totals.calls.aligned_alloc"), 4);
    assert_int_equal(num(d, "totals.calls.memalign"), 3);
    assert_int_equal(num(d, "totals.calls.valloc"), 2);
    assert_int_equal(num(d, "totals.calls.pvalloc"), 2);
    assert_int_equal(num(d, "totals.allocs"), 76);
    assert_int_equal(num(d, "totals.reallocs"), 15);
    assert_int_equal(num(d, "totals.frees"), 76);
    assert_int_equal(num(d, "totals.aligned_allocs"), 16);
    assert_int_equal(num(d, "totals.live_blocks"), 0);
    assert_int_equal(num(d, "totals.live_bytes"), 0);
    assert_int_equal(num(d, "totals.reallocs_in_place") + num(d, "totals.reallocs_moved"), 15);
    assert_true(json_is_true(json_object_get(json_object_get(d, "precision"), "exact")));
    /* Every requested size of the fixture in its bucket: malloc 16..55, calloc 4 x (8..27),
     * reallocarray 2 x 8, posix_memalign 100, aligned_alloc 256, memalign 50, valloc and pvalloc
     * 10, and the reallocs to 4000..4009. */
    static const struct {
        json_int_t from, to, count;
    } expected[] = {{0, 16, 10}, {17, 32, 17}, {33, 48, 20},  {49, 64, 14},    {65, 80, 4},
                    {81, 96, 4}, {97, 112, 8}, {241, 256, 4}, {2049, 4096, 10}};
    json_t *buckets = json_object_get(d, "requested_sizes");
    assert_int_equal(json_array_size(buckets), sizeof expected / sizeof expected[0]);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        json_t *b = json_array_get(buckets, i);
        assert_int_equal(json_integer_value(json_object_get(b, "from")), expected[i].from);
        assert_int_equal(json_integer_value(json_object_get(b, "to")), expected[i].to);
        assert_int_equal(json_integer_value(json_object_get(b, "count")), expected[i].count);
    }
    json_decref(d);
    remove_dir();
}

/* valgrind counts every realloc as one allocation and one free; its summary must equal ours on
 * the calls it intercepts (valgrind 3.19 misses reallocarray, valloc and pvalloc). */
static void test_agrees_with_valgrind(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_exact_counts"), "portable", NULL};
    pid_t pid = start(argv, NULL);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    char command[600];
    snprintf(command, sizeof command,
             "valgrind %s portable 2>&1 | sed -n 's/.*total heap usage: \\([0-9,]*\\) allocs, "
             "\\([0-9,]*\\) frees.*/\\1 \\2/p' | tr -d ,",
             FIXTURE("fixture_exact_counts"));
    FILE *p = popen(command, "r");
    long long allocs = -1, frees = -1;
    assert_int_equal(fscanf(p, "%lld %lld", &allocs, &frees), 2);
    pclose(p);
    assert_int_equal(allocs, 82);
    assert_int_equal(num(d, "totals.allocs") + num(d, "totals.reallocs"), allocs);
    assert_int_equal(num(d, "totals.frees") + num(d, "totals.reallocs"), frees);
    json_decref(d);
    remove_dir();
}

/* The dump's writer copies plain text in runs and escapes the rest: an argument with every kind
 * of character JSON must escape, between plain runs, at both ends and one after another, comes
 * back exactly as given. */
static void test_an_argument_that_needs_escapes_comes_back_whole(void **state)
{
    (void)state;
    fresh_dir();
    const char *given = "\"a\\b\"\"c\n\x01\x1f\x7f d\u00e9\\";
    const char *argv[] = {FIXTURE("fixture_exact_counts"), given, "", NULL};
    pid_t pid = start(argv, NULL);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    json_t *args = json_object_get(json_object_get(d, "process"), "argv");
    assert_int_equal(json_array_size(args), 3);
    assert_string_equal(json_string_value(json_array_get(args, 1)), given);
    assert_string_equal(json_string_value(json_array_get(args, 2)), "");
    json_decref(d);
    remove_dir();
}

static void test_leaked_blocks_are_live(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_exact_counts"), "leak", NULL};
    pid_t pid = start(argv, NULL);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    assert_int_equal(num(d, "totals.frees"), 73);
    assert_int_equal(num(d, "totals.reallocs"), 18);
    assert_int_equal(num(d, "totals.live_blocks"), 3);
    json_decref(d);
    remove_dir();
}

static void test_threads_exact_without_deadlock(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_threads"), "16", "1000000", NULL};
    pid_t pid = start(argv, NULL);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    /* glibc allocates for each thread's start too; the fixture's own pairs are 16M. */
    assert_int_equal(num(d, "totals.calls.malloc"), 16000000);
    assert_true(num(d, "totals.frees") >= 16000000);
    assert_int_equal(num(d, "totals.threads") >= 16, 1);
    json_decref(d);
    remove_dir();
}

/* Blocks allocated on one thread and freed on another are credited back to their site: free()
 * skips the block table only when the block's shard is empty, which a block handed over through
 * the program's own synchronisation never finds. */
static void test_frees_on_another_thread_reach_their_site(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_threads"), "2", "200000", "handoff", NULL};
    const char *env[] = {"QAUDIT_STACKS=fp", NULL};
    pid_t pid = start(argv, env);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    assert_true(num(d, "totals.calls.malloc") >= 200000);
    assert_int_equal(sum_over_sites(d, "allocs"), num(d, "totals.allocs"));
    assert_int_equal(sum_over_sites(d, "frees"), num(d, "totals.frees"));
    assert_int_equal(num(d, "precision.blocks_untracked"), 0);
    /* The producer's one call site: every block it made came back. */
    json_t *producer = site_with(d, "allocs", 200000);
    assert_non_null(producer);
    assert_int_equal(json_integer_value(json_object_get(producer, "frees")), 200000);
    assert_int_equal(json_integer_value(json_object_get(producer, "live_bytes")), 0);
    json_decref(d);
    remove_dir();
}

/* QAUDIT_FOLLOW_EXEC=0: the exec'd program runs without the preload, so no dump of its own. */
static void test_follow_exec_off(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_forker"), "exec", NULL};
    const char *env[] = {"QAUDIT_FOLLOW_EXEC=0", NULL};
    pid_t pid = start(argv, env);
    assert_int_equal(wait_exit(pid), 0);
    assert_int_equal(count_dumps(), 1);
    json_t *d = load_pid(pid);
    assert_false(json_is_true(json_object_get(json_object_get(d, "config"), "follow_exec")));
    assert_true(strlen(json_string_value(
                    json_object_get(json_object_get(d, "process"), "build_id"))) == 40);
    assert_true(num(d, "process.end_time_ns") >= num(d, "process.start_time_ns"));
    json_decref(d);
    remove_dir();
}

/* With jemalloc preloaded after qaudit, calls are forwarded to jemalloc: counts stay exact and
 * the usable sizes are jemalloc's classes (32 for 17..32 bytes), not glibc's (24, 40, ...). */
static void test_forwards_to_jemalloc(void **state)
{
    (void)state;
    fresh_dir();
    char preload[700];
    preload_then_jemalloc(preload, sizeof preload);
    const char *argv[] = {FIXTURE("fixture_exact_counts"), "portable", NULL};
    const char *env[] = {preload, NULL};
    pid_t pid = start(argv, env);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    /* Debian's jemalloc depends on libstdc++, whose start-up allocates its 72,704-byte exception
     * emergency pool through malloc: a real allocation of the process, counted once. */
    long long libstdcxx = 0;
    size_t m;
    json_t *module;
    json_array_foreach(json_object_get(d, "modules"), m, module)
    {
        libstdcxx |=
            strstr(json_string_value(json_object_get(module, "path")), "libstdc++") != NULL;
    }
    assert_int_equal(num(d, "totals.calls.malloc"), 40 + libstdcxx);
    assert_int_equal(num(d, "totals.frees"), 72);
    bool has_glibc_class = false, has_jemalloc_class = false;
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(d, "usable_sizes"), i, row)
    {
        long long usable = json_integer_value(json_object_get(row, "usable"));
        has_glibc_class |= usable == 24 || usable == 40;
        has_jemalloc_class |= usable == 32 || usable == 48;
    }
    assert_false(has_glibc_class);
    assert_true(has_jemalloc_class);
    json_decref(d);
    remove_dir();
}

/* What fixture_usable_sizes summed with malloc_usable_size, next to what the dump says. */
struct usable_run {
    long long made, live;             /* the fixture's sums */
    long long dump_usable, dump_live; /* totals.bytes_usable, totals.live_bytes */
    char source[64];                  /* precision.usable_sizes_from */
};

/* preload_setting: NULL for qaudit alone, or an "LD_PRELOAD=..." setting. */
static struct usable_run run_usable_sizes(const char *preload_setting)
{
    struct usable_run run = {-1, -1, -1, -1, ""};
    fresh_dir();
    char expected_path[300];
    snprintf(expected_path, sizeof expected_path, "%s/expected", dump_dir);
    const char *argv[] = {FIXTURE("fixture_usable_sizes"), expected_path, NULL};
    const char *extra[] = {preload_setting, NULL};
    pid_t pid = start(argv, extra);
    assert_int_equal(wait_exit(pid), 0);
    FILE *f = fopen(expected_path, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%lld %lld", &run.made, &run.live), 2);
    fclose(f);
    json_t *d = load_pid(pid);
    run.dump_usable = num(d, "totals.bytes_usable");
    run.dump_live = num(d, "totals.live_bytes");
    json_t *source = json_object_get(json_object_get(d, "precision"), "usable_sizes_from");
    snprintf(run.source, sizeof run.source, "%s", json_string_value(source));
    json_decref(d);
    remove_dir();
    return run;
}

/* Usable sizes read from glibc's chunk headers (the fast way, chosen on this glibc) and asked of
 * jemalloc (the only way there) both equal what the allocator's malloc_usable_size says, for
 * small, aligned, mmap'd and realloc'd blocks, allocated and freed. */
static void test_usable_bytes_agree_with_the_allocator(void **state)
{
    (void)state;
    struct usable_run glibc = run_usable_sizes(NULL);
    assert_string_equal(glibc.source, "glibc_chunk_header");
    assert_int_equal(glibc.dump_usable, glibc.made);
    assert_int_equal(glibc.dump_live, glibc.live);

    char both[700];
    preload_then_jemalloc(both, sizeof both);
    struct usable_run je = run_usable_sizes(both);
    assert_string_equal(je.source, "malloc_usable_size");
    /* jemalloc brings libstdc++, whose emergency pool is one more live block, never freed: the
     * bytes freed must match exactly, the bytes made by that one block at most. */
    assert_int_equal(je.dump_usable - je.dump_live, je.made - je.live);
    assert_in_range(je.dump_usable - je.made, 0, 128 * 1024);
}

/* A library loaded with dlopen: its allocations are counted, and site patterns naming its
 * (static) function are resolved after the dlopen. */
static void test_dlopen_and_patterns(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_dlopener"), FIXTURE_LIB_DIR "/libfixture_plugin.so",
                          NULL};
    const char *env[] = {"QAUDIT_QUEUE_SITES=plugin_block", NULL};
    pid_t pid = start(argv, env);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    assert_true(num(d, "totals.calls.malloc") >= 25);
    assert_int_equal(num(d, "queues.attribution.by_stack_patterns"), 25);
    assert_true(num(d, "precision.site_pattern_ranges") >= 1);
    json_decref(d);
    remove_dir();
}

/* Names glibc resolves against the module that calls dlopen: a bare name along the program's
 * RUNPATH, "$ORIGIN" as the program's directory. Through the preload's dlopen glibc sees the
 * preload as the caller (no RUNPATH; another directory), so both failed (exit 3) before the
 * name was resolved as the caller would (dlopen_name.c). The plugin's allocations are counted. */
static void test_dlopen_names_resolve_as_the_callers(void **state)
{
    (void)state;
    fresh_dir();
    const char *names[] = {"libfixture_plugin.so", "$ORIGIN/libfixture_plugin_origin.so",
                           "${ORIGIN}/libfixture_plugin_origin.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *argv[] = {FIXTURE("fixture_dlopener_runpath"), names[i], NULL};
        pid_t pid = start(argv, NULL);
        int status = wait_exit(pid);
        if (status != 0)
            fail_msg("dlopen(\"%s\") under the preload: exit %d (3: not found)", names[i], status);
        json_t *d = load_pid(pid);
        assert_true(num(d, "totals.calls.malloc") >= 25);
        json_decref(d);
    }
    remove_dir();
}

/* The calls the preload wraps work before its start-up: a library the program needs is
 * initialised first, and its constructor's prctl reached a wrapper not yet resolved (ENOSYS). */
static void test_a_constructor_before_the_preload_calls_prctl(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_early_prctl"), NULL};
    assert_int_equal(wait_exit(start(argv, NULL)), 0);
    remove_dir();
}

static json_t *run_queue(const char *variant, const char *mode, const char *const *env)
{
    char path[300];
    snprintf(path, sizeof path, FIXTURE_DIR "/fixture_queue_%s", variant);
    const char *argv[] = {path, mode, NULL};
    pid_t pid = start(argv, env);
    int status = wait_exit(pid);
    if (status != 0)
        fail_msg("%s %s exited %d", variant, mode, status);
    return load_pid(pid);
}

static long long allocs_at_depth(json_t *d, long long depth)
{
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(json_object_get(d, "queues"), "allocs_by_depth"), i, row)
    {
        if (json_integer_value(json_object_get(row, "depth")) == depth)
            return json_integer_value(json_object_get(row, "allocs"));
    }
    return 0;
}

static void test_queue_depth_one_and_nine(void **state)
{
    (void)state;
    fresh_dir();
    json_t *d = run_queue("inline", "depth1", NULL);
    assert_true(passed(d, "depth_one_no_alloc"));
    assert_true(passed(d, "conservation"));
    assert_true(passed(d, "connections_closed"));
    assert_int_equal(num(d, "queues.attribution.by_hooks"), 0);
    assert_int_equal(num(d, "queues.pushes"), 10000);
    json_decref(d);

    d = run_queue("inline", "depth9", NULL);
    assert_true(passed(d, "depth_one_no_alloc"));
    assert_true(passed(d, "conservation"));
    assert_int_equal(allocs_at_depth(d, 2), 1); /* 8 slots */
    assert_int_equal(allocs_at_depth(d, 9), 1); /* 16 slots: the one growth at depth 9 */
    json_t *group =
        json_array_get(json_object_get(json_object_get(d, "queues"), "by_peak_depth"), 0);
    assert_int_equal(json_integer_value(json_object_get(group, "peak_depth")), 9);
    assert_int_equal(json_integer_value(json_object_get(group, "allocs")), 2);
    json_decref(d);

    /* The previous ring allocates its 8-slot array on the first push: at depth one. */
    d = run_queue("ring", "depth1", NULL);
    assert_false(passed(d, "depth_one_no_alloc"));
    assert_true(passed(d, "conservation"));
    assert_int_equal(allocs_at_depth(d, 1), 1);
    json_t *v = json_array_get(json_object_get(d, "depth_one_violations"), 0);
    assert_int_equal(json_integer_value(json_object_get(v, "size")), 96);
    json_decref(d);

    /* The deque allocates its map and first chunk at init, then a chunk every 42 cycles. */
    d = run_queue("deque", "depth1", NULL);
    assert_false(passed(d, "depth_one_no_alloc"));
    assert_true(passed(d, "conservation"));
    assert_int_equal(allocs_at_depth(d, 0), 2);
    assert_true(allocs_at_depth(d, 1) >= 10000 / 42 - 1 && allocs_at_depth(d, 1) <= 10000 / 42 + 1);
    json_decref(d);
    remove_dir();
}

static void test_injected_growth_and_shrink_failures(void **state)
{
    (void)state;
    fresh_dir();
    const char *grow[] = {"QAUDIT_FAIL=nth=1,site=rxq_grow_push", NULL};
    json_t *d = run_queue("inline", "growfail", grow); /* exits 0 only if values survived */
    assert_int_equal(num(d, "injected_failures.injected"), 1);
    assert_int_equal(num(d, "totals.failed_allocs"), 1);
    json_decref(d);
    const char *shrink[] = {"QAUDIT_FAIL=nth=1,site=rxq_shrink", NULL};
    d = run_queue("inline", "shrinkfail", shrink);
    assert_int_equal(num(d, "injected_failures.injected"), 1);
    assert_true(passed(d, "conservation"));
    json_decref(d);
    remove_dir();
}

static void test_foreign_abi_and_deepbind_are_reported(void **state)
{
    (void)state;
    fresh_dir();
    json_t *d = run_queue("inline", "badabi", NULL);
    assert_int_equal(num(d, "queues.refused_events"), 1);
    assert_int_equal(num(d, "queues.pushes"), 1); /* the refused event was not counted */
    assert_true(passed(d, "conservation"));
    json_decref(d);
    const char *argv[] = {FIXTURE("fixture_dlopener"), FIXTURE_LIB_DIR "/libfixture_plugin.so",
                          "deepbind", NULL};
    pid_t pid = start(argv, NULL);
    assert_int_equal(wait_exit(pid), 0);
    d = load_pid(pid);
    json_t *deep = json_object_get(json_object_get(d, "precision"), "deepbind_libraries");
    assert_int_equal(json_array_size(deep), 1);
    assert_false(json_is_true(json_object_get(json_object_get(d, "precision"), "exact")));
    json_decref(d);
    remove_dir();
}

/* Every stack mode keeps the counts exact; the modes that capture stacks produce sites whose
 * allocations add up to what was counted. */
static void test_stack_modes(void **state)
{
    (void)state;
    static const char *const modes[] = {"QAUDIT_STACKS=off", "QAUDIT_STACKS=always",
                                        "QAUDIT_STACKS=fp", "QAUDIT_STACKS=sampled:10",
                                        "QAUDIT_STACKS=sampled:4096b"};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        fresh_dir();
        const char *argv[] = {FIXTURE("fixture_threads"), "2", "20000", NULL};
        const char *env[] = {modes[m], NULL};
        pid_t pid = start(argv, env);
        assert_int_equal(wait_exit(pid), 0);
        json_t *d = load_pid(pid);
        assert_int_equal(num(d, "totals.calls.malloc"), 40000);
        /* Every pair frees its block. Past a thread's first 256 looks most frees take the fast
         * path when no block table is kept (off, sampled): fixture_exact_counts is too short
         * to reach it, so this is where a fast free that forgets to count shows. */
        assert_true(num(d, "totals.frees") >= 40000);
        long long in_sites = sum_over_sites(d, "allocs");
        if (m == 0)
            assert_int_equal(in_sites, 0);
        else if (m <= 2)
            assert_true(in_sites >= 40000); /* thread start-up allocations too */
        else
            assert_true(in_sites > 0 && in_sites < 40000);
        json_decref(d);
        remove_dir();
    }
}

/* The sampled site of fixture_threads' workers: the one with the most samples. */
static json_t *busiest_site(json_t *d)
{
    json_t *best = NULL, *site;
    size_t i;
    json_array_foreach(json_object_get(d, "sites"), i, site)
    {
        if (best == NULL || json_integer_value(json_object_get(site, "allocs")) >
                                json_integer_value(json_object_get(best, "allocs")))
            best = site;
    }
    return best;
}

static long long site_number(json_t *site, const char *key)
{
    return json_integer_value(json_object_get(site, key));
}

/* sampled:N draws each allocation with probability 1/N (geometric intervals), sampled:Nb each
 * byte with probability 1/N (exponential intervals), and the sampled blocks' frees come back to
 * their site. Two workers each make 20,000 mallocs of 16 + i % 1000 bytes from one call site
 * (10,310,000 bytes a thread). By count the samples are Binomial(40,000, 1/10): 4,000, standard
 * deviation 60; the bounds are 5 deviations. By bytes, each sample's weight 1/(1 - e^(-s/N))
 * summed (allocs_estimate, bytes_estimate) estimates the site's 40,000 allocations and
 * 20,620,000 bytes with a standard deviation near 1.4 %; the bounds are 6 %. The streams are
 * seeded, so a run's samples are reproducible. */
static void test_sampling_draws_one_in_n(void **state)
{
    (void)state;
    static const char *const settings[] = {"QAUDIT_STACKS=sampled:10",
                                           "QAUDIT_STACKS=sampled:4096b"};
    for (size_t c = 0; c < 2; c++) {
        fresh_dir();
        const char *argv[] = {FIXTURE("fixture_threads"), "2", "20000", NULL};
        const char *env[] = {settings[c], NULL};
        pid_t pid = start(argv, env);
        assert_int_equal(wait_exit(pid), 0);
        json_t *d = load_pid(pid);
        json_t *workers = busiest_site(d);
        assert_non_null(workers);
        assert_int_equal(site_number(workers, "frees"), site_number(workers, "allocs"));
        assert_int_equal(site_number(workers, "live_bytes"), 0);
        json_t *config = json_object_get(d, "config");
        const char *intervals = json_string_value(json_object_get(config, "sample_intervals"));
        if (c == 0) {
            assert_in_range(site_number(workers, "allocs"), 4000 - 300, 4000 + 300);
            assert_string_equal(intervals, "geometric");
        } else {
            assert_in_range(site_number(workers, "allocs_estimate"), 37600, 42400);
            assert_in_range(site_number(workers, "bytes_estimate"), 19382800, 21857200);
            assert_string_equal(intervals, "exponential");
        }
        json_decref(d);
        remove_dir();
    }
}

/* The path of the module holding a frame's address, or "?". */
static const char *module_of(json_t *root, const char *frame)
{
    unsigned long long at = strtoull(frame, NULL, 16);
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(root, "modules"), i, m)
    {
        unsigned long long start =
            strtoull(json_string_value(json_object_get(m, "start")), NULL, 16);
        unsigned long long end = strtoull(json_string_value(json_object_get(m, "end")), NULL, 16);
        if (at >= start && at < end)
            return json_string_value(json_object_get(m, "path"));
    }
    return "?";
}

/* Stacks by libunwind and by the frame-pointer walk begin at the program's call (none of the
 * interposer's own frames kept) and stop at QAUDIT_STACK_DEPTH, counting what they cut. */
static void test_stacks_start_at_the_program_and_stop_at_the_depth(void **state)
{
    (void)state;
    static const char *const modes[] = {"QAUDIT_STACKS=always", "QAUDIT_STACKS=fp"};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        for (int limited = 0; limited < 2; limited++) {
            fresh_dir();
            const char *argv[] = {FIXTURE("fixture_threads"), "2", "20000", NULL};
            const char *env[] = {modes[m], limited ? "QAUDIT_STACK_DEPTH=1" : NULL, NULL};
            pid_t pid = start(argv, env);
            assert_int_equal(wait_exit(pid), 0);
            json_t *d = load_pid(pid);
            json_t *site = site_with(d, "allocs", 40000); /* the workers' malloc */
            assert_non_null(site);
            json_t *frames = json_object_get(site, "frames");
            assert_true(json_array_size(frames) >= 1);
            const char *innermost = module_of(d, json_string_value(json_array_get(frames, 0)));
            assert_non_null(strstr(innermost, "fixture_threads"));
            size_t i, f;
            json_t *s, *frame;
            json_array_foreach(json_object_get(d, "sites"), i, s)
            {
                json_t *fs = json_object_get(s, "frames");
                if (limited)
                    assert_true(json_array_size(fs) <= 1);
                json_array_foreach(fs, f, frame)
                {
                    const char *in = module_of(d, json_string_value(frame));
                    assert_null(strstr(in, "libqaudit-preload"));
                }
            }
            if (limited)
                assert_true(num(d, "precision.stacks_truncated") > 0);
            json_decref(d);
            remove_dir();
        }
    }
}

/* Stacks that share their innermost frame and every frame past one stay two sites, and a
 * recursion one call deeper is a site of its own, with the exact counts of each, through each
 * thread's memo of recent stacks (records/sites.c, qa_site_of_stack) in both stack modes. */
static void test_stacks_differing_in_one_frame_stay_apart(void **state)
{
    (void)state;
    static const char *const modes[] = {"QAUDIT_STACKS=fp", "QAUDIT_STACKS=always"};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        fresh_dir();
        const char *argv[] = {FIXTURE("fixture_stack_paths"), "paths", NULL};
        const char *env[] = {modes[m], NULL};
        json_t *d = run_preloaded(argv, env);
        json_t *one = site_with(d, "allocs", 3000), *other = site_with(d, "allocs", 1000);
        assert_non_null(one);
        assert_non_null(other);
        assert_int_equal(json_integer_value(json_object_get(one, "frees")), 3000);
        assert_int_equal(json_integer_value(json_object_get(other, "frees")), 1000);
        json_decref(d);
        remove_dir();

        fresh_dir();
        const char *deep[] = {FIXTURE("fixture_stack_paths"), "depths", NULL};
        d = run_preloaded(deep, env);
        static const long long counts[] = {500, 700, 900};
        size_t depth[3];
        for (int i = 0; i < 3; i++) {
            json_t *site = site_with(d, "allocs", counts[i]);
            assert_non_null(site);
            assert_int_equal(json_integer_value(json_object_get(site, "frees")), counts[i]);
            depth[i] = json_array_size(json_object_get(site, "frames"));
        }
        assert_int_equal(depth[1], depth[0] + 1);
        assert_int_equal(depth[2], depth[1] + 1);
        json_decref(d);
        remove_dir();
    }
}

/* More distinct stacks than the site table holds: each allocation at a stack that found no
 * site counts in sites_dropped and at the overflow site (id 1), every one of them, however
 * often its stack repeats (a memo that kept the overflow site would count only the first). */
static void test_dropped_stacks_count_every_time(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_stack_paths"), "overflow", NULL};
    const char *env[] = {"QAUDIT_STACKS=fp", NULL};
    json_t *d = run_preloaded(argv, env);
    long long dropped = num(d, "precision.sites_dropped");
    assert_true(dropped > 2 * ((1 << 17) - 65536));
    json_t *overflow = site_with(d, "id", 1);
    assert_non_null(overflow);
    assert_int_equal(json_integer_value(json_object_get(overflow, "allocs")), dropped);
    assert_int_equal(sum_over_sites(d, "allocs"), num(d, "totals.allocs"));
    json_decref(d);
    remove_dir();
}

/* A dump that cannot be written (neither where QAUDIT_OUT says nor in the fallback directory)
 * is reported once on stderr; the program is not disturbed. */
static void test_unwritable_dump_path(void **state)
{
    (void)state;
    fresh_dir();
    char log[400];
    snprintf(log, sizeof log, "%s/stderr", dump_dir);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_CREAT | O_WRONLY, 0600);
        dup2(fd, 2);
        setenv("LD_PRELOAD", test_preload_path(), 1);
        setenv("QAUDIT_OUT", "/nonexistent/qaudit/dump.json", 1);
        setenv("QAUDIT_FALLBACK_DIR", "/nonexistent/fallback", 1);
        execl(FIXTURE("fixture_exact_counts"), "fixture_exact_counts", (char *)NULL);
        _exit(127);
    }
    assert_int_equal(wait_exit(pid), 0);
    char text[1024] = {0};
    int fd = open(log, O_RDONLY);
    assert_true(read(fd, text, sizeof text - 1) > 0);
    close(fd);
    assert_non_null(strstr(text, "cannot write the dump"));
    assert_null(strstr(strstr(text, "cannot write the dump") + 1, "cannot write the dump"));
    remove_dir();
}

/* Starts a ringkv binary under the preload on a free port; returns its pid and sets *port. */
static pid_t start_ringkv(const char *binary, int *port)
{
    int out[2];
    assert_int_equal(pipe(out), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        setenv("LD_PRELOAD", test_preload_path(), 1);
        char pattern[400];
        snprintf(pattern, sizeof pattern, "%s/dump-%%p.json", dump_dir);
        setenv("QAUDIT_OUT", pattern, 1);
        execl(binary, binary, "--port", "0", "--threads", "2", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    FILE *f = fdopen(out[0], "r");
    char line[256] = {0};
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    char *colon = strstr(line, "127.0.0.1:");
    assert_non_null(colon);
    *port = atoi(colon + 10);
    return pid;
}

static void load_ringkv(int port, int pipeline)
{
    char command[300];
    snprintf(command, sizeof command,
             "timeout 60 redis-benchmark -p %d -t set,get -n 20000 -c 20 -d 64 -P %d -q "
             ">/dev/null 2>&1",
             port, pipeline);
    assert_int_equal(system(command), 0);
}

static void test_ringkv_under_the_preload(void **state)
{
    (void)state;
    fresh_dir();
    int port;
    pid_t pid = start_ringkv(SERVER_DIR "/ringkv", &port);
    load_ringkv(port, 1);
    kill(pid, SIGUSR2); /* a snapshot while it serves */
    char path[400];
    snprintf(path, sizeof path, "%s/dump-%d.snapshot-0.json", dump_dir, (int)pid);
    for (int i = 0; i < 600 && access(path, F_OK) != 0; i++) /* at most 60 s */
        usleep(100000);
    json_t *snapshot = load(path);
    assert_string_equal(json_string_value(json_object_get(snapshot, "reason")), "signal");
    json_decref(snapshot);
    kill(pid, SIGTERM);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    assert_string_equal(json_string_value(json_object_get(d, "reason")), "exit");
    assert_true(passed(d, "depth_one_no_alloc"));
    assert_true(passed(d, "conservation"));
    assert_true(passed(d, "connections_closed"));
    assert_true(num(d, "queues.connections.opened") >= 20);
    assert_true(num(d, "queues.pushes") >= 40000);
    json_decref(d);
    remove_dir();

    /* The previous ring: every connection allocates its 96-byte array at depth one. */
    fresh_dir();
    pid = start_ringkv(SERVER_DIR "/ringkv-ring", &port);
    load_ringkv(port, 1);
    kill(pid, SIGTERM);
    assert_int_equal(wait_exit(pid), 0);
    d = load_pid(pid);
    assert_false(passed(d, "depth_one_no_alloc"));
    assert_true(passed(d, "conservation"));
    json_t *v = json_array_get(json_object_get(d, "depth_one_violations"), 0);
    assert_int_equal(json_integer_value(json_object_get(v, "size")), 96);
    assert_int_equal(allocs_at_depth(d, 1), num(d, "queues.connections.opened"));
    json_decref(d);
    remove_dir();
}

static bool wait_for_path(const char *path, int tenths)
{
    for (int i = 0; i < tenths; i++) {
        if (access(path, F_OK) == 0)
            return true;
        usleep(100000);
    }
    return false;
}

static bool wait_for_dump(pid_t pid, const char *suffix, int tenths)
{
    char path[400];
    snprintf(path, sizeof path, "%s/dump-%d%s.json", dump_dir, (int)pid, suffix);
    return wait_for_path(path, tenths);
}

/* SIGUSR2 gives a complete dump while the program keeps running; interval dumps follow. */
static void test_snapshot_while_running(void **state)
{
    (void)state;
    fresh_dir();
    char stop[400];
    snprintf(stop, sizeof stop, "%s/stop", dump_dir);
    const char *argv[] = {FIXTURE("fixture_long_running"), stop, NULL};
    pid_t pid = start(argv, NULL);
    wait_catching(pid, SIGUSR2);
    /* The handler is the preload's from its constructor on; the counts need the program's own
     * first allocations (a signal before them gave a snapshot of 0, under load). */
    char started[420];
    snprintf(started, sizeof started, "%s.started", stop);
    assert_true(wait_for_path(started, 600));
    kill(pid, SIGUSR2);
    assert_true(wait_for_dump(pid, ".snapshot-0", 600)); /* a snapshot keeps a name of its own */
    assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);    /* still running */
    char snapshot[400];
    snprintf(snapshot, sizeof snapshot, "%s/dump-%d.snapshot-0.json", dump_dir, (int)pid);
    json_t *d = load(snapshot);
    assert_string_equal(json_string_value(json_object_get(d, "reason")), "signal");
    assert_true(num(d, "totals.allocs") > 0);
    json_decref(d);
    close(open(stop, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(wait_exit(pid), 0);
    d = load(snapshot); /* the exit dump did not replace it */
    assert_string_equal(json_string_value(json_object_get(d, "reason")), "signal");
    json_decref(d);
    d = load_pid(pid);
    assert_string_equal(json_string_value(json_object_get(d, "reason")), "exit");
    json_decref(d);
    remove_dir();

    fresh_dir();
    snprintf(stop, sizeof stop, "%s/stop", dump_dir);
    const char *env[] = {"QAUDIT_INTERVAL=1", NULL};
    pid = fork();
    if (pid == 0) {
        char out[400];
        snprintf(out, sizeof out, "%s/dump-%%p-%%n.json", dump_dir);
        setenv("QAUDIT_OUT", out, 1);
        setenv("LD_PRELOAD", test_preload_path(), 1);
        putenv((char *)env[0]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    assert_true(wait_for_dump(pid, "-1", 600)); /* the second interval dump */
    close(open(stop, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(wait_exit(pid), 0);
    char path[400];
    snprintf(path, sizeof path, "%s/dump-%d-0.json", dump_dir, (int)pid);
    json_t *first = load(path);
    assert_string_equal(json_string_value(json_object_get(first, "reason")), "interval");
    json_decref(first);
    remove_dir();
}

/* Snapshots taken while a thread counts into its pending per-site figures must not lose any:
 * the final dump's sites add up to its totals. */
static void test_snapshots_lose_no_site_counts(void **state)
{
    (void)state;
    fresh_dir();
    char stop[400];
    snprintf(stop, sizeof stop, "%s/stop", dump_dir);
    const char *argv[] = {FIXTURE("fixture_long_running"), stop, "busy", NULL};
    const char *env[] = {"QAUDIT_STACKS=fp", NULL};
    pid_t pid = start(argv, env);
    wait_catching(pid, SIGUSR2);
    for (int i = 0; i < 30; i++) {
        kill(pid, SIGUSR2);
        usleep(30000);
    }
    close(open(stop, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    assert_string_equal(json_string_value(json_object_get(d, "reason")), "exit");
    assert_true(num(d, "totals.allocs") > 100000);
    assert_int_equal(sum_over_sites(d, "allocs"), num(d, "totals.allocs"));
    assert_int_equal(sum_over_sites(d, "frees"), num(d, "totals.frees"));
    json_decref(d);
    remove_dir();
}

static void test_poison_half_written(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_half_written"), NULL};
    const char *env[] = {"QAUDIT_POISON=all", "QAUDIT_STACKS=always", NULL};
    pid_t pid = start(argv, env);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    json_t *site = site_with(d, "bytes", 1000);
    assert_non_null(site);
    assert_int_equal(json_integer_value(json_object_get(site, "never_written_bytes")), 500);
    json_decref(d);
    remove_dir();
}

static void test_cpp_new_and_delete(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_cpp_new"), NULL};
    pid_t pid = start(argv, NULL);
    assert_int_equal(wait_exit(pid), 0);
    json_t *d = load_pid(pid);
    /* Per round 4 plain forms through malloc and 4 aligned ones; libstdc++ allocates its
     * emergency exception pool once at start-up (one more malloc, never freed). */
    long long aligned = num(d, "totals.calls.aligned_alloc") +
                        num(d, "totals.calls.posix_memalign") + num(d, "totals.calls.memalign");
    assert_int_equal(aligned, 40);
    long long plain = num(d, "totals.calls.malloc");
    assert_true(plain == 40 || plain == 41);
    assert_int_equal(num(d, "totals.frees"), 80);
    json_decref(d);
    remove_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_counts),
        cmocka_unit_test(test_agrees_with_valgrind),
        cmocka_unit_test(test_an_argument_that_needs_escapes_comes_back_whole),
        cmocka_unit_test(test_leaked_blocks_are_live),
        cmocka_unit_test(test_threads_exact_without_deadlock),
        cmocka_unit_test(test_follow_exec_off),
        cmocka_unit_test(test_forwards_to_jemalloc),
        cmocka_unit_test(test_usable_bytes_agree_with_the_allocator),
        cmocka_unit_test(test_dlopen_and_patterns),
        cmocka_unit_test(test_dlopen_names_resolve_as_the_callers),
        cmocka_unit_test(test_a_constructor_before_the_preload_calls_prctl),
        cmocka_unit_test(test_queue_depth_one_and_nine),
        cmocka_unit_test(test_injected_growth_and_shrink_failures),
        cmocka_unit_test(test_snapshot_while_running),
        cmocka_unit_test(test_snapshots_lose_no_site_counts),
        cmocka_unit_test(test_frees_on_another_thread_reach_their_site),
        cmocka_unit_test(test_poison_half_written),
        cmocka_unit_test(test_cpp_new_and_delete),
        cmocka_unit_test(test_foreign_abi_and_deepbind_are_reported),
        cmocka_unit_test(test_stack_modes),
        cmocka_unit_test(test_sampling_draws_one_in_n),
        cmocka_unit_test(test_stacks_start_at_the_program_and_stop_at_the_depth),
        cmocka_unit_test(test_stacks_differing_in_one_frame_stay_apart),
        cmocka_unit_test(test_dropped_stacks_count_every_time),
        cmocka_unit_test(test_unwritable_dump_path),
        cmocka_unit_test(test_ringkv_under_the_preload),
    };
    return cmocka_run_group_tests_name("preload", tests, NULL, NULL);
}
