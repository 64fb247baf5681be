/* Forked children (the forks' tests, in one file): each child writes its own dump, counted from
 * the fork, and an exec'd image its own; what a child inherited at its fork is kept apart from what
 * it did itself, exactly, in every stack mode; no figure of any dump is negative; `qaudit report`
 * reads each dump alone and the tree merged, counting every allocation once
 * (fixtures/fork_inherit.c says what each process did, measured by the program itself). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "qaudit/control.h"

/* A figure named key=N in the process's line of the fixture's output. */
static long long said(const char *out, const char *who, const char *key)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s ", who);
    const char *line = strstr(out, prefix);
    assert_non_null(line);
    const char *end = strchr(line, '\n');
    char pattern[64];
    snprintf(pattern, sizeof pattern, " %s=", key);
    const char *at = strstr(line, pattern);
    assert_true(at != NULL && (end == NULL || at < end));
    return atoll(at + strlen(pattern));
}

struct tree {
    json_t *parent, *child, *grandchild;
    json_t **all;
    size_t count;
};

/* The three dumps, told apart by process.forked_from. */
static void load_tree(struct tree *t)
{
    t->all = load_all_dumps(&t->count);
    assert_int_equal(t->count, 3);
    for (size_t i = 0; i < t->count; i++)
        if (json_object_get(json_object_get(t->all[i], "process"), "forked_from") == NULL)
            t->parent = t->all[i];
    assert_non_null(t->parent);
    for (size_t i = 0; i < t->count; i++)
        if (t->all[i] != t->parent &&
            num(t->all[i], "process.forked_from.pid") == num(t->parent, "process.pid"))
            t->child = t->all[i];
    assert_non_null(t->child);
    t->grandchild = NULL;
    for (size_t i = 0; i < t->count; i++)
        if (t->all[i] != t->parent && t->all[i] != t->child)
            t->grandchild = t->all[i];
    assert_non_null(t->grandchild);
    assert_int_equal(num(t->grandchild, "process.forked_from.pid"), num(t->child, "process.pid"));
    assert_int_equal(num(t->grandchild, "process.forked_from.start_time_ns"),
                     num(t->child, "process.start_time_ns"));
    assert_int_equal(num(t->child, "process.forked_from.start_time_ns"),
                     num(t->parent, "process.start_time_ns"));
}

/* Every integer anywhere in a dump is at least zero. */
static void assert_no_negative(json_t *v, const char *where)
{
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0)
            fail_msg("%s is %lld", where, (long long)json_integer_value(v));
        return;
    }
    const char *key;
    json_t *item;
    size_t i;
    if (json_is_object(v))
        json_object_foreach(v, key, item) assert_no_negative(item, key);
    if (json_is_array(v))
        json_array_foreach(v, i, item) assert_no_negative(item, where);
}

static void check_tree(const char *stacks)
{
    fresh_dir();
    char setting[64], out[4096];
    snprintf(setting, sizeof setting, "QAUDIT_STACKS=%s", stacks);
    const char *argv[] = {FIXTURE("fixture_fork_inherit"), NULL};
    const char *extra[] = {setting, "QAUDIT_SIGNAL=off", NULL};
    struct captured_run run = {.argv = argv, .extra = extra, .preload = true};
    assert_int_equal(run_captured(&run, out, sizeof out), 0);
    struct tree t;
    load_tree(&t);
    for (size_t i = 0; i < t.count; i++)
        assert_no_negative(t.all[i], "dump");

    /* The parent does nothing after its fork: what it holds at exit is what the child got. */
    json_t *p = t.parent, *c = t.child, *g = t.grandchild;
    assert_int_equal(num(c, "totals.inherited.blocks"), num(p, "totals.live_blocks"));
    assert_int_equal(num(c, "totals.inherited.bytes"), num(p, "totals.live_bytes"));
    assert_true(num(p, "totals.live_blocks") >= 50);

    /* The child: its own calls apart from what it did to inherited blocks. */
    assert_int_equal(num(c, "totals.allocs"), said(out, "child", "allocs"));
    assert_int_equal(num(c, "totals.frees"), said(out, "child", "frees"));
    assert_int_equal(num(c, "totals.calls.free"), said(out, "child", "frees") + 7);
    assert_int_equal(num(c, "totals.reallocs"), 3);
    assert_int_equal(num(c, "totals.inherited.reallocated"), said(out, "child", "reallocated"));
    assert_int_equal(num(c, "totals.inherited.freed.blocks"), 7 + 3);
    assert_int_equal(num(c, "totals.inherited.freed.bytes"),
                     said(out, "child", "freed_bytes") + said(out, "child", "realloc_old"));
    long long inherited_left = num(c, "totals.inherited.blocks") - 10;
    long long own_left = 5 + 3 - 2;
    assert_int_equal(num(c, "totals.live_blocks"), inherited_left + own_left);
    assert_int_equal(num(c, "totals.live_bytes"),
                     num(c, "totals.inherited.bytes") - said(out, "child", "freed_bytes") -
                         said(out, "child", "realloc_old") + said(out, "child", "realloc_new") +
                         said(out, "child", "own_bytes") - said(out, "child", "own_freed"));

    /* The grandchild inherited the child's whole heap: its own blocks and what it still held. */
    assert_int_equal(num(g, "totals.inherited.blocks"), num(c, "totals.live_blocks"));
    assert_int_equal(num(g, "totals.inherited.bytes"), num(c, "totals.live_bytes"));
    assert_int_equal(num(g, "totals.allocs"), 0);
    assert_int_equal(num(g, "totals.frees"), 0);
    assert_int_equal(num(g, "totals.inherited.freed.blocks"), 2);
    assert_int_equal(num(g, "totals.inherited.freed.bytes"),
                     said(out, "grandchild", "freed_bytes"));
    assert_int_equal(num(g, "totals.live_blocks"), num(c, "totals.live_blocks") - 2);
    for (size_t i = 0; i < t.count; i++)
        assert_int_equal(num(t.all[i], "precision.frees_uncounted"), 0);
    free_dumps(t.all, t.count);
}

static void test_inheritance_exact_without_stacks(void **state)
{
    (void)state;
    check_tree("off");
    remove_dir();
}

static void test_inheritance_exact_under_default_sampling(void **state)
{
    (void)state;
    check_tree("sampled:65536b");
    remove_dir();
}

/* With every stack kept, the inheritance is known by site: site A's 40 blocks of 100 bytes
 * reach the child (which frees 7 and reallocs 3 of them), site B's 10 of 1000 only as
 * [id, blocks, bytes] (the child never counts there), under the parent's id for that site. */
static void test_inheritance_by_site(void **state)
{
    (void)state;
    check_tree("always");
    struct tree t;
    load_tree(&t);
    json_t *a = site_with(t.parent, "bytes", 4000), *b = site_with(t.parent, "bytes", 10000);
    assert_non_null(a);
    assert_non_null(b);
    json_t *child_a = NULL;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(t.child, "sites"), i, s)
    {
        if (json_integer_value(json_object_get(s, "id")) ==
            json_integer_value(json_object_get(a, "id")))
            child_a = s;
        assert_true(json_integer_value(json_object_get(s, "id")) !=
                    json_integer_value(json_object_get(b, "id")));
    }
    assert_non_null(child_a);
    json_t *in = json_object_get(child_a, "inherited");
    assert_int_equal(num(in, "blocks"), 40);
    assert_int_equal(num(in, "bytes"), 4000);
    assert_int_equal(num(in, "freed_blocks"), 10);
    assert_int_equal(num(in, "freed_bytes"), 1000);
    assert_int_equal(num(child_a, "allocs"), 3); /* the reallocated blocks are the child's */
    bool found_b = false;
    json_array_foreach(json_object_get(t.child, "inherited_sites"), i,
                       s) if (json_integer_value(json_array_get(s, 0)) ==
                              json_integer_value(json_object_get(b, "id")))
    {
        assert_int_equal(json_integer_value(json_array_get(s, 1)), 10);
        assert_int_equal(json_integer_value(json_array_get(s, 2)), 10000);
        found_b = true;
    }
    assert_true(found_b);
    /* The grandchild allocated nothing: it frees one inherited block at site B and one at the
     * child's own site, which its dump lists by id with what it freed there, with no stack. */
    assert_int_equal(json_array_size(json_object_get(t.grandchild, "sites")), 0);
    long long freed_blocks = 0, freed_bytes = 0;
    json_array_foreach(json_object_get(t.grandchild, "inherited_sites"), i, s)
    {
        assert_true(json_array_size(s) == 3 || json_array_size(s) == 5);
        if (json_array_size(s) == 5) {
            freed_blocks += json_integer_value(json_array_get(s, 3));
            freed_bytes += json_integer_value(json_array_get(s, 4));
        }
        if (json_integer_value(json_array_get(s, 0)) ==
            json_integer_value(json_object_get(b, "id"))) {
            assert_int_equal(json_array_size(s), 5);
            assert_int_equal(json_integer_value(json_array_get(s, 1)), 10);
            assert_int_equal(json_integer_value(json_array_get(s, 3)), 1);
            assert_int_equal(json_integer_value(json_array_get(s, 4)), 1000);
        }
    }
    assert_int_equal(freed_blocks, 2);
    assert_int_equal(freed_bytes, 1000 + 48); /* requested bytes, as sites count them */
    free_dumps(t.all, t.count);
    remove_dir();
}

/* qaudit report's JSON of the given dumps (paths joined by spaces); its exit status in status. */
static json_t *report_json(const char *paths, int *status)
{
    char command[2048];
    static char out[1 << 18];
    snprintf(command, sizeof command, "%s/qaudit report %s --format json", SERVER_DIR, paths);
    FILE *f = popen(command, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    *status = pclose(f);
    json_error_t error;
    return json_loads(out, 0, &error);
}

/* qaudit report: each dump alone and the tree merged exit 0; merged, allocations count once and
 * the child's inherited site B is named by the parent's stack; alone, it is unattributed. */
static void test_report_reads_the_tree(void **state)
{
    (void)state;
    check_tree("always");
    struct tree t;
    load_tree(&t);
    char all[600], one[600];
    snprintf(all, sizeof all, "%s/*.json", dump_dir);
    int status;
    json_t *r = report_json(all, &status);
    assert_int_equal(status, 0);
    assert_non_null(r);
    assert_int_equal(num(r, "totals.allocs"), num(t.parent, "totals.allocs") +
                                                  num(t.child, "totals.allocs") +
                                                  num(t.grandchild, "totals.allocs"));
    assert_int_equal(num(r, "totals.live_blocks"), num(t.parent, "totals.live_blocks") +
                                                       num(t.child, "totals.live_blocks") +
                                                       num(t.grandchild, "totals.live_blocks"));
    assert_int_equal(num(r, "totals.inherited.processes"), 2);
    assert_int_equal(num(r, "totals.inherited.unattributed.blocks"), 0);
    json_decref(r);
    for (size_t i = 0; i < t.count; i++) {
        snprintf(one, sizeof one, "%s/dump-%lld.json", dump_dir, num(t.all[i], "process.pid"));
        r = report_json(one, &status);
        assert_int_equal(status, 0);
        assert_non_null(r);
        if (t.all[i] == t.child) /* site B's 10 blocks: their stack is in the parent's dump */
            assert_int_equal(num(r, "totals.inherited.unattributed.blocks"), 10);
        json_decref(r);
    }
    free_dumps(t.all, t.count);
    remove_dir();
}

/* A forked child starts with no writer thread (a short child never has one), nor starts one at
 * its own first allocations within QAUDIT_WRITER_LAZY_MS of the fork, nor from the C library's
 * malloc calls (theirs may hold a lock pthread_create takes); its own malloc calls past the
 * delay start it. With threaded, the child of a process that has had a thread (as a server's
 * whose writer runs): glibc's flag says "threaded" there for good, yet the child has one thread.
 * The early check holds only for a child that made its allocations within the delay: on a
 * machine so loaded that it did not, the run is done again, at most LAZY_TRIES times. */
#define LAZY_TRIES 20

static void assert_child_lazy(const char *mode)
{
    fresh_dir();
    char out[4096];
    const char *argv[] = {FIXTURE("fixture_writer_cpus"), mode, NULL};
    int at_fork = -1, early = -1, after_libc = -1, started = -1;
    long early_ms = -1;
    for (int tries = 0; tries < LAZY_TRIES && (early_ms < 0 || early_ms >= QAUDIT_WRITER_LAZY_MS);
         tries++) {
        struct captured_run run = {.argv = argv, .preload = true};
        int status = run_captured(&run, out, sizeof out);
        if (status != 0)
            fail_msg("fixture_writer_cpus %s exit %d:\n%s", mode, status, out);
        const char *child = strstr(out, "child threads at fork=");
        if (child == NULL ||
            sscanf(child, "child threads at fork=%d early=%d early_ms=%ld after libc=%d started=%d",
                   &at_fork, &early, &early_ms, &after_libc, &started) != 5)
            fail_msg("no child could count its threads:\n%s", out);
    }
    if (early_ms >= QAUDIT_WRITER_LAZY_MS)
        fail_msg("in %d runs no child made its allocations within %d ms of its fork (the last: "
                 "%ld ms): the machine is too loaded for this check\n%s",
                 LAZY_TRIES, QAUDIT_WRITER_LAZY_MS, early_ms, out);
    if (at_fork != 0)
        fail_msg("a forked child had %d threads besides its own at once: no lazy writer\n%s",
                 at_fork, out);
    if (early != 0)
        fail_msg("a forked child's writer started at its allocations %ld ms after the fork, "
                 "within the delay\n%s",
                 early_ms, out);
    if (after_libc != 0)
        fail_msg("a forked child's writer started from the C library's own malloc calls:\n%s", out);
    if (started != 1)
        fail_msg("a forked child's own malloc calls past the delay started no writer:\n%s", out);
    remove_dir();
}

static void test_forked_child_starts_its_writer_lazily(void **state)
{
    (void)state;
    assert_child_lazy("lazy");
}

static void test_child_of_threaded_parent_starts_its_writer_lazily(void **state)
{
    (void)state;
    assert_child_lazy("lazy-threaded");
}

/* The program itself starts with no writer thread either, nor starts one from the C library's
 * malloc calls, so that it stays single-threaded as natively: unshare(CLONE_NEWUSER), which the
 * kernel refuses to a process with a second thread, works as it does natively; the program's
 * own malloc calls past QAUDIT_WRITER_LAZY_MS, its live bytes moving, start the writer. */
static void test_program_starts_its_writer_lazily(void **state)
{
    (void)state;
    fresh_dir();
    char out[4096];
    const char *argv[] = {FIXTURE("fixture_writer_cpus"), "program", NULL};
    struct captured_run native = {.argv = argv};
    int status = run_captured(&native, out, sizeof out);
    int at_start = -1, after_libc = -1, refused = -1, started = -1;
    const char *line = strstr(out, "program threads at start=");
    if (status != 0 || line == NULL ||
        sscanf(line, "program threads at start=%d after libc=%d unshare=%d", &at_start, &after_libc,
               &refused) != 3 ||
        refused != 0)
        fail_msg("natively, unshare(CLONE_NEWUSER) fails here: nothing to compare\n%s", out);
    /* The check at start holds only for a program that got there within the delay: on a machine
     * so loaded that it did not (its start_ms), the run is done again, at most 20 times. */
    long start_ms = -1;
    for (int tries = 0; tries < LAZY_TRIES && (start_ms < 0 || start_ms >= QAUDIT_WRITER_LAZY_MS);
         tries++) {
        struct captured_run run = {.argv = argv, .preload = true};
        status = run_captured(&run, out, sizeof out);
        line = strstr(out, "program threads at start=");
        if (status != 0 || line == NULL ||
            sscanf(line,
                   "program threads at start=%d after libc=%d unshare=%d started=%d start_ms=%ld",
                   &at_start, &after_libc, &refused, &started, &start_ms) != 5 ||
            start_ms < 0)
            fail_msg("fixture_writer_cpus program exit %d:\n%s", status, out);
    }
    if (start_ms >= QAUDIT_WRITER_LAZY_MS)
        fail_msg("in %d runs the program never reached main within %d ms of its exec (the last: "
                 "%ld ms): the machine is too loaded for this check\n%s",
                 LAZY_TRIES, QAUDIT_WRITER_LAZY_MS, start_ms, out);
    if (at_start != 0)
        fail_msg("the program had %d threads besides its own at its start: no lazy writer\n%s",
                 at_start, out);
    if (after_libc != 0)
        fail_msg("the program's writer started from the C library's own malloc calls:\n%s", out);
    if (refused != 0)
        fail_msg("unshare(CLONE_NEWUSER) failed under the preload (errno %d), not natively:\n%s",
                 refused, out);
    if (started != 1)
        fail_msg("the program's own malloc calls past the delay started no writer:\n%s", out);
    remove_dir();
}

/* The writer thread starts on its creator's processor (a thread that ran elsewhere makes a short
 * child's copy-on-write faults and exit reach the other processor too) and may use every
 * processor the program may once it has woken: pinned in a child that has just forked (one that
 * starts its writer at the fork: QAUDIT_INTERVAL), the parent's own after a dump request. */
static void test_writer_pinned_until_it_wakes(void **state)
{
    (void)state;
    fresh_dir();
    char out[4096];
    const char *argv[] = {FIXTURE("fixture_writer_cpus"), "pinned", NULL};
    const char *extra[] = {"QAUDIT_INTERVAL=3600", NULL};
    struct captured_run run = {
        .argv = argv, .extra = extra, .preload = true, .out_name = "dump-%p-%n.json"};
    int status = run_captured(&run, out, sizeof out);
    if (status != 0)
        fail_msg("fixture_writer_cpus pinned exit %d:\n%s", status, out);
    int child_cpus = -1;
    const char *child = strstr(out, "child writer cpus=");
    if (child == NULL || sscanf(child, "child writer cpus=%d", &child_cpus) != 1)
        fail_msg("no child could tell whether its writer was pinned:\n%s", out);
    if (child_cpus != 1)
        fail_msg("a forked child's writer was not pinned before it first woke:\n%s", out);
    char writer[256], main_cpus[256];
    const char *parent = strstr(out, "parent writer cpus=");
    assert_non_null(parent);
    assert_int_equal(sscanf(parent, "parent writer cpus=%255s main=%255s", writer, main_cpus), 2);
    if (strcmp(writer, main_cpus) != 0)
        fail_msg("after a dump the writer may use %s, the program %s", writer, main_cpus);
    remove_dir();
}

/* A forked child writes its own dump, counted from the fork; an exec'd one its own too (moved
 * here from test_preload.c: the forks' tests in one file). */
static void test_fork_and_exec(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_forker"), NULL};
    pid_t pid = start(argv, NULL);
    assert_int_equal(wait_exit(pid), 0);
    /* Two dumps: the parent's (100 of its own) and the child's (250, counted from the fork). */
    json_t *parent = load_pid(pid);
    assert_int_equal(num(parent, "totals.calls.malloc"), 100);
    DIR *dir = opendir(dump_dir);
    struct dirent *e;
    int children = 0;
    char path[600];
    while ((e = readdir(dir)) != NULL) {
        int other;
        if (sscanf(e->d_name, "dump-%d.json", &other) != 1 || other == pid ||
            strstr(e->d_name, ".tmp"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dump_dir, e->d_name);
        json_t *child = load(path);
        assert_int_equal(num(child, "totals.calls.malloc"), 250);
        assert_int_equal(num(child, "totals.frees"), 250);
        assert_int_equal(num(child, "process.ppid"), pid);
        json_decref(child);
        children++;
    }
    closedir(dir);
    assert_int_equal(children, 1);
    json_decref(parent);
    remove_dir();

    fresh_dir();
    const char *exec_argv[] = {FIXTURE("fixture_forker"), "exec", NULL};
    pid = start(exec_argv, NULL);
    assert_int_equal(wait_exit(pid), 0);
    dir = opendir(dump_dir);
    int execd = 0;
    while ((e = readdir(dir)) != NULL) {
        int other;
        if (sscanf(e->d_name, "dump-%d.json", &other) != 1 || other == pid)
            continue;
        snprintf(path, sizeof path, "%s/%s", dump_dir, e->d_name);
        json_t *child = load(path);
        json_t *args = json_object_get(json_object_get(child, "process"), "argv");
        assert_string_equal(json_string_value(json_array_get(args, 1)), "execd");
        assert_int_equal(num(child, "totals.calls.malloc"), 70);
        json_decref(child);
        execd++;
    }
    closedir(dir);
    assert_int_equal(execd, 1);
    remove_dir();
}

/* The first small blocks of a program (a forked child's ten allocations) lie within a page under
 * the preload, as natively: its start-up probe of glibc's chunk headers (base/usable.c) once
 * left page-aligned blocks in glibc's tcache, which the program's next blocks of those sizes
 * were, so a child's first blocks lay over four pages and each fork wrote three more. */
static void test_start_up_leaves_first_blocks_in_a_page(void **state)
{
    (void)state;
    fresh_dir();
    const char *argv[] = {FIXTURE("fixture_first_blocks"), NULL};
    for (int preload = 0; preload < 2; preload++) {
        char out[256];
        struct captured_run run = {.argv = argv, .preload = preload};
        long span = -1;
        if (run_captured(&run, out, sizeof out) != 0 || sscanf(out, "span=%ld", &span) != 1)
            fail_msg("fixture_first_blocks: %s", out);
        if (span >= 4096)
            fail_msg("first ten blocks %ld bytes apart %s", span,
                     preload ? "under the preload" : "natively");
    }
    remove_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inheritance_exact_without_stacks),
        cmocka_unit_test(test_inheritance_exact_under_default_sampling),
        cmocka_unit_test(test_inheritance_by_site),
        cmocka_unit_test(test_report_reads_the_tree),
        cmocka_unit_test(test_forked_child_starts_its_writer_lazily),
        cmocka_unit_test(test_child_of_threaded_parent_starts_its_writer_lazily),
        cmocka_unit_test(test_program_starts_its_writer_lazily),
        cmocka_unit_test(test_writer_pinned_until_it_wakes),
        cmocka_unit_test(test_fork_and_exec),
        cmocka_unit_test(test_start_up_leaves_first_blocks_in_a_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
