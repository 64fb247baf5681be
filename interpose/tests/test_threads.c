/* Per-thread records under thread churn (fixtures/thread_churn.c): the preload's memory stays
 * within 4 MB of the same program run natively after 100,000 threads, because the record of an
 * exited thread is reused, and every count stays exact across that reuse, in every dump. */
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define CHURN FIXTURE("fixture_thread_churn")

/* The fixture runs BATCH threads at a time on 256 KiB stacks: glibc keeps BATCH stacks cached,
 * and pthread_create callocs one TLS vector (DTV) for each, on the creating thread, never freed
 * while the stack stays cached. Those are the only allocations glibc makes for the threads
 * (valgrind, natively: `thread_churn own 1000 4` makes 1,004 allocations). */
enum { BATCH = 4, MANY = 100000, SOME = 4000 };
enum { LATE_PAIRS = 100 }; /* as in the fixture */
#define SOME_TEXT "4000"
#define MANY_TEXT "100000"
#define BATCH_TEXT "4"

/* Records of exited threads are reused: with BATCH threads at a time, a few dozen records at
 * most, against one per thread without reuse. The dump's bound on the peak is (records that
 * published - 1) x 64 KiB. */
#define FEW_RECORDS_BOUND (64LL * 65536)

struct memory {
    long rss_kb, hwm_kb;
};

static struct memory read_memory(const char *path)
{
    struct memory m = {-1, -1};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%ld %ld", &m.rss_kb, &m.hwm_kb), 2);
    fclose(f);
    assert_true(m.rss_kb > 0 && m.hwm_kb > 0);
    return m;
}

/* The fixture without the preload. */
static void run_native(const char *const *argv)
{
    pid_t pid = fork();
    if (pid == 0) {
        unsetenv("LD_PRELOAD");
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    assert_int_equal(wait_exit(pid), 0);
}

/* The totals of a churn in which the threads made `pairs` malloc/free pairs in all, main
 * `main_mallocs` more, and pthread_create one calloc per cached stack (main is counted among the
 * threads for those). */
static void assert_churn_totals(json_t *d, long long pairs, long long threads,
                                long long main_mallocs)
{
    assert_int_equal(num(d, "totals.calls.malloc"), pairs + main_mallocs);
    assert_int_equal(num(d, "totals.calls.calloc"), BATCH);
    assert_int_equal(num(d, "totals.allocs"), pairs + main_mallocs + BATCH);
    assert_int_equal(num(d, "totals.frees"), pairs + main_mallocs);
    assert_int_equal(num(d, "totals.live_blocks"), BATCH);
    assert_int_equal(num(d, "totals.threads"), threads);
}

static void churn_near_native(const char *mode, long long bucket_to, long long main_mallocs)
{
    fresh_dir();
    char out[400];
    snprintf(out, sizeof out, "%s/memory", dump_dir);
    const char *argv[] = {CHURN, mode, MANY_TEXT, BATCH_TEXT, out, NULL};
    run_native(argv);
    struct memory native = read_memory(out);
    json_t *d = run_preloaded(argv, NULL);
    struct memory preloaded = read_memory(out);
    print_message("%s: VmRSS %ld kB natively, %ld kB preloaded; VmHWM %ld kB, %ld kB\n", mode,
                  native.rss_kb, preloaded.rss_kb, native.hwm_kb, preloaded.hwm_kb);
    assert_true(preloaded.rss_kb - native.rss_kb <= 4096);
    assert_true(preloaded.hwm_kb - native.hwm_kb <= 4096);
    assert_churn_totals(d, MANY, MANY + 1, main_mallocs);
    json_t *sizes = json_object_get(d, "requested_sizes");
    json_t *bucket = json_array_get(sizes, 0); /* the threads' blocks' bucket comes first */
    assert_int_equal(json_integer_value(json_object_get(bucket, "to")), bucket_to);
    assert_int_equal(json_integer_value(json_object_get(bucket, "count")), MANY + main_mallocs);
    json_decref(d);
    remove_dir();
}

/* 100,000 threads, each one malloc and one free: memory within 4 MB of native, counts exact. */
static void test_many_threads_memory_near_native(void **state)
{
    (void)state;
    churn_near_native("own", 32, 0);
}

/* The same, each thread freeing the block the previous thread allocated. */
static void test_many_threads_freeing_each_others_blocks(void **state)
{
    (void)state;
    churn_near_native("cross", 48, 1);
}

static json_t *site_with_bytes(json_t *d, long long bytes)
{
    json_t *site = site_with(d, "bytes", bytes);
    if (site == NULL)
        fail_msg("no site with %lld bytes", bytes);
    return site;
}

static long long field(json_t *site, const char *name)
{
    return json_integer_value(json_object_get(site, name));
}

static int sites_with_counts(json_t *d, long long allocs, long long frees, long long live_bytes)
{
    int n = 0;
    size_t i;
    json_t *site;
    json_array_foreach(json_object_get(d, "sites"), i, site)
    {
        n += field(site, "allocs") == allocs && field(site, "frees") == frees &&
             field(site, "live_bytes") == live_bytes;
    }
    return n;
}

/* A pool of 300 threads alive at once, each past the stacks libgcc's unwinder takes first: with
 * every stack taken, memory stays within 40 MB of native (64 of libunwind's 256 KiB frame caches,
 * and about 20 KB of the preload's own per thread: 23 MB measured; a cache for each thread would
 * be 75 MB more), and the stacks of both unwinders agree: one site. */
static void test_thread_pool_with_stacks_memory_bounded(void **state)
{
    (void)state;
    enum { THREADS = 300, PAIRS = 100 };
    fresh_dir();
    char out[400];
    snprintf(out, sizeof out, "%s/memory", dump_dir);
    const char *argv[] = {CHURN, "pool", "300", "100", out, NULL};
    run_native(argv);
    struct memory native = read_memory(out);
    /* The cached unwind rules walk these stacks by themselves; the check walks each again by
     * the libraries, so that their per-thread caches (64 at most) are taken as well. */
    const char *settings[] = {"QAUDIT_UNWIND_CHECK=0", "QAUDIT_UNWIND_CHECK=1"};
    for (int s = 0; s < 2; s++) {
        const char *env[] = {"QAUDIT_STACKS=always", settings[s], NULL};
        json_t *d = run_preloaded(argv, env);
        struct memory preloaded = read_memory(out);
        print_message("pool, %s: VmRSS %ld kB natively, %ld kB preloaded; VmHWM %ld kB, %ld kB\n",
                      settings[s], native.rss_kb, preloaded.rss_kb, native.hwm_kb,
                      preloaded.hwm_kb);
        assert_true(preloaded.rss_kb - native.rss_kb <= 40 * 1024);
        assert_true(preloaded.hwm_kb - native.hwm_kb <= 40 * 1024);
        assert_int_equal(sites_with_counts(d, THREADS * PAIRS, THREADS * PAIRS, 0), 1);
        assert_int_equal(num(d, "totals.threads"), THREADS + 1);
        json_decref(d);
    }
    remove_dir();
}

/* Every site of the fixture exact after records changed hands thousands of times, with stacks
 * by libunwind and by frame pointers; blocks freed by main, by other threads, and by a thread's
 * own key destructor after the preload's has retired its record. */
static void test_sites_exact_across_reuse(void **state)
{
    (void)state;
    const char *stacks[] = {"QAUDIT_STACKS=always", "QAUDIT_STACKS=fp"};
    for (int s = 0; s < 2; s++) {
        fresh_dir();
        char out[400];
        snprintf(out, sizeof out, "%s/memory", dump_dir);
        const char *env[] = {stacks[s], NULL};

        const char *keep[] = {CHURN, "keep", SOME_TEXT, BATCH_TEXT, out, NULL};
        json_t *d = run_preloaded(keep, env);
        json_t *churned = site_with_bytes(d, 24LL * SOME);
        assert_int_equal(field(churned, "allocs"), SOME);
        assert_int_equal(field(churned, "frees"), SOME);
        assert_int_equal(field(churned, "live_bytes"), 0);
        json_t *kept = site_with_bytes(d, 44LL * SOME); /* 32, 40, 48, 56 in turn */
        assert_int_equal(field(kept, "allocs"), SOME);
        assert_int_equal(field(kept, "frees"), SOME / 2);
        assert_int_equal(field(kept, "live_bytes"), 24LL * SOME); /* 40 + 56 per 4 threads */
        json_t *array = site_with_bytes(d, 8LL * SOME);
        assert_int_equal(field(array, "allocs"), 1);
        assert_int_equal(field(array, "live_bytes"), 8LL * SOME);
        assert_int_equal(sum_over_sites(d, "allocs"), num(d, "totals.allocs"));
        assert_int_equal(num(d, "totals.allocs"), 2LL * SOME + 1 + BATCH);
        assert_int_equal(num(d, "totals.frees"), SOME + SOME / 2);
        assert_int_equal(num(d, "totals.threads"), SOME + 1);
        assert_true(num(d, "precision.peak_live_bytes_within") <= FEW_RECORDS_BOUND);
        json_decref(d);

        const char *late[] = {CHURN, "late", SOME_TEXT, BATCH_TEXT, out, NULL};
        d = run_preloaded(late, env);
        /* The key's blocks; the pairs in the thread body; the pairs in the key destructor. */
        assert_int_equal(sites_with_counts(d, SOME, SOME, 0), 1);
        assert_int_equal(sites_with_counts(d, LATE_PAIRS * SOME, LATE_PAIRS * SOME, 0), 2);
        assert_churn_totals(d, SOME * (1 + 2LL * LATE_PAIRS), SOME + 1, 0);
        assert_int_equal(sum_over_sites(d, "frees"), num(d, "totals.frees"));
        assert_true(num(d, "precision.peak_live_bytes_within") <= FEW_RECORDS_BOUND);
        json_decref(d);
        remove_dir();
    }
}

/* totals.threads counts threads that made a counted allocation, whatever record they used:
 * threads that only free blocks main allocated are not counted. */
static void test_threads_counts_allocating_threads(void **state)
{
    (void)state;
    fresh_dir();
    char out[400];
    snprintf(out, sizeof out, "%s/memory", dump_dir);
    const char *argv[] = {CHURN, "free", SOME_TEXT, BATCH_TEXT, out, NULL};
    json_t *d = run_preloaded(argv, NULL);
    assert_int_equal(num(d, "totals.calls.malloc"), SOME);
    assert_int_equal(num(d, "totals.frees"), SOME);
    assert_int_equal(num(d, "totals.threads"), 1);
    json_decref(d);
    remove_dir();
}

static json_t *load_numbered(pid_t pid, int n)
{
    char path[400];
    snprintf(path, sizeof path, "%s/dump-%d-%d.json", dump_dir, (int)pid, n);
    return load(path);
}

static void assert_not_below(json_t *before, json_t *after, const char *path)
{
    long long a = num(before, path), b = num(after, path);
    if (b < a)
        fail_msg("%s went from %lld to %lld between two dumps", path, a, b);
}

/* Each site's allocations and frees never fall between dumps (sites matched by their frames). */
static void assert_sites_not_below(json_t *before, json_t *after)
{
    size_t i, k;
    json_t *old, *now;
    assert_true(json_array_size(json_object_get(before, "sites")) > 0); /* no vacuous pass */
    json_array_foreach(json_object_get(before, "sites"), i, old)
    {
        bool found = false;
        json_array_foreach(json_object_get(after, "sites"), k, now)
        {
            if (!json_equal(json_object_get(old, "frames"), json_object_get(now, "frames")))
                continue;
            found = true;
            assert_true(field(now, "allocs") >= field(old, "allocs"));
            assert_true(field(now, "frees") >= field(old, "frees"));
        }
        assert_true(found);
    }
}

/* Twenty snapshots while threads come and go, each requested once the previous one is written:
 * no total, call count or site count ever goes backwards, and the exit dump is exact. */
static void test_snapshots_during_churn_never_go_backwards(void **state)
{
    (void)state;
    enum { SNAPSHOTS = 20 };
    fresh_dir();
    char out[400], prefix[300], pattern[400];
    snprintf(out, sizeof out, "%s/memory", dump_dir);
    snprintf(prefix, sizeof prefix, "%s/dump", dump_dir);
    snprintf(pattern, sizeof pattern, "QAUDIT_OUT=%s-%%p-%%n.json", prefix);
    const char *argv[] = {CHURN, "own", "20000", BATCH_TEXT, out, "20", prefix, NULL};
    const char *env[] = {pattern, "QAUDIT_STACKS=always", NULL};
    pid_t pid = start(argv, env);
    assert_int_equal(wait_exit(pid), 0);
    static const char *const paths[] = {
        "totals.allocs",       "totals.frees",        "totals.bytes_requested",
        "totals.bytes_usable", "totals.threads",      "totals.calls.malloc",
        "totals.calls.free",   "totals.calls.calloc", "totals.peak_live_bytes"};
    json_t *before = load_numbered(pid, 0);
    for (int n = 1; n <= SNAPSHOTS; n++) {
        json_t *after = load_numbered(pid, n);
        const char *reason = json_string_value(json_object_get(after, "reason"));
        assert_string_equal(reason, n == SNAPSHOTS ? "exit" : "signal");
        for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
            assert_not_below(before, after, paths[i]);
        assert_sites_not_below(before, after);
        json_decref(before);
        before = after;
    }
    assert_churn_totals(before, 20000, 20001, 0);
    json_decref(before);
    remove_dir();
}

/* A child forked after a churn counts its own churn only, exactly: the parent's records and
 * retired list are not the child's. */
static void test_fork_after_churn(void **state)
{
    (void)state;
    fresh_dir();
    char out[400];
    snprintf(out, sizeof out, "%s/memory", dump_dir);
    const char *argv[] = {CHURN, "forked", SOME_TEXT, BATCH_TEXT, out, NULL};
    pid_t pid = start(argv, NULL);
    assert_int_equal(wait_exit(pid), 0);
    json_t *parent = load_pid(pid);
    assert_churn_totals(parent, SOME, SOME + 1, 0);
    json_decref(parent);
    DIR *dir = opendir(dump_dir);
    struct dirent *e;
    char parent_name[64], path[600];
    snprintf(parent_name, sizeof parent_name, "dump-%d.json", (int)pid);
    int children = 0;
    while ((e = readdir(dir)) != NULL) {
        if (strncmp(e->d_name, "dump-", 5) != 0 || strcmp(e->d_name, parent_name) == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dump_dir, e->d_name);
        json_t *child = load(path);
        /* The child's threads reuse the stacks glibc cached in the parent: no calloc. */
        assert_int_equal(num(child, "totals.calls.malloc"), SOME);
        assert_int_equal(num(child, "totals.calls.calloc"), 0);
        assert_int_equal(num(child, "totals.frees"), SOME);
        assert_int_equal(num(child, "totals.threads"), SOME);
        assert_true(num(child, "precision.peak_live_bytes_within") <= FEW_RECORDS_BOUND);
        json_decref(child);
        children++;
    }
    closedir(dir);
    assert_int_equal(children, 1);
    remove_dir();
}

/* A program nobody here wrote: Debian's python3 starting and joining 20,000 threads (each makes
 * a bytearray) stays within 4 MB of its native memory, and every thread is counted. */
static void test_python_thread_churn(void **state)
{
    (void)state;
    fresh_dir();
    char out[400];
    snprintf(out, sizeof out, "%s/memory", dump_dir);
    const char *script =
        "import sys, threading\n"
        "for _ in range(20000):\n"
        "    t = threading.Thread(target=lambda: bytearray(100)); t.start(); t.join()\n"
        "kb = {l.split(':')[0]: l.split()[1] for l in open('/proc/self/status') if 'kB' in l}\n"
        "open(sys.argv[1], 'w').write(kb['VmRSS'] + ' ' + kb['VmHWM'] + '\\n')\n";
    const char *argv[] = {"/usr/bin/python3", "-c", script, out, NULL};
    run_native(argv);
    struct memory native = read_memory(out);
    json_t *d = run_preloaded(argv, NULL);
    struct memory preloaded = read_memory(out);
    print_message("python3: VmRSS %ld kB natively, %ld kB preloaded; VmHWM %ld kB, %ld kB\n",
                  native.rss_kb, preloaded.rss_kb, native.hwm_kb, preloaded.hwm_kb);
    assert_true(preloaded.rss_kb - native.rss_kb <= 4096);
    assert_true(preloaded.hwm_kb - native.hwm_kb <= 4096);
    assert_int_equal(num(d, "totals.threads"), 20001);
    assert_true(num(d, "totals.allocs") > 20000);
    json_decref(d);
    remove_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_threads_memory_near_native),
        cmocka_unit_test(test_many_threads_freeing_each_others_blocks),
        cmocka_unit_test(test_thread_pool_with_stacks_memory_bounded),
        cmocka_unit_test(test_sites_exact_across_reuse),
        cmocka_unit_test(test_threads_counts_allocating_threads),
        cmocka_unit_test(test_snapshots_during_churn_never_go_backwards),
        cmocka_unit_test(test_fork_after_churn),
        cmocka_unit_test(test_python_thread_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
