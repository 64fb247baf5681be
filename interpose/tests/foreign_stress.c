/* test_foreign stress: fixture_stress under every stack mode: no crash, no hang, its own counts
 * exact. */
#include <arpa/inet.h>
#include <dirent.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "foreign_common.h"
#include "foreign_run.h"
#include "harness.h"

/* The path of the module holding a frame's address, or "?". */
static const char *module_of(json_t *dump, const char *frame)
{
    unsigned long long at = strtoull(frame, NULL, 16);
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(dump, "modules"), i, m)
    {
        unsigned long long from = strtoull(text_of(m, "start"), NULL, 16);
        unsigned long long to = strtoull(text_of(m, "end"), NULL, 16);
        if (at >= from && at < to)
            return text_of(m, "path");
    }
    return "?";
}

/* The site of the fixture's own call that made exactly allocs blocks, or NULL. */
static json_t *own_site(json_t *dump, long long allocs)
{
    size_t i;
    json_t *site;
    json_array_foreach(json_object_get(dump, "sites"), i, site)
    {
        const char *innermost =
            json_string_value(json_array_get(json_object_get(site, "frames"), 0));
        if (json_integer_value(json_object_get(site, "allocs")) == allocs && innermost &&
            strstr(module_of(dump, innermost), "fixture_stress"))
            return site;
    }
    return NULL;
}

static void assert_count(const char *what, long long counted, long long made)
{
    if (counted != made)
        fail_msg("%s: %lld in the dump, %lld made by the program", what, counted, made);
}

/* Allocations credited to sites without a single frame (the stack could not be taken). */
static long long frameless_allocs(json_t *dump)
{
    long long sum = 0;
    size_t i;
    json_t *site;
    json_array_foreach(json_object_get(dump, "sites"), i, site)
    {
        if (json_array_size(json_object_get(site, "frames")) == 0)
            sum += json_integer_value(json_object_get(site, "allocs"));
    }
    return sum;
}

static void assert_site_balanced(json_t *dump, long long allocs, const char *what)
{
    json_t *site = own_site(dump, allocs);
    if (site == NULL)
        fail_msg("no site of the fixture's %s with %lld allocations (sites without frames hold "
                 "%lld)",
                 what, allocs, frameless_allocs(dump));
    assert_count("frees at that site", json_integer_value(json_object_get(site, "frees")), allocs);
    assert_count("live bytes at that site", json_integer_value(json_object_get(site, "live_bytes")),
                 0);
}

struct stress_counts {
    long workers, worker_frees, shorts, short_frees;
    int child, child_blocks, plugin_loads, signals;
};

/* The parent's dumps: exactly one at exit (returned), between 1 and 50 on the signal. */
static json_t *parent_exit_dump(const char *dir, pid_t pid)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char prefix[32], path[1200];
    snprintf(prefix, sizeof prefix, "d-%d-", (int)pid);
    json_t *exit_dump = NULL;
    int signal_dumps = 0;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || strstr(e->d_name, ".tmp"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        json_t *dump = load(path);
        if (strcmp(reason(dump), "exit") == 0 && exit_dump == NULL) {
            exit_dump = dump;
            continue;
        }
        if (strcmp(reason(dump), "signal") != 0)
            fail_msg("%s: a dump for \"%s\"", e->d_name, reason(dump));
        signal_dumps++;
        json_decref(dump);
    }
    closedir(d);
    if (exit_dump == NULL)
        fail_msg("no exit dump of the stress program");
    if (signal_dumps < 1 || signal_dumps > 50)
        fail_msg("%d dumps on the signal, for 50 signals sent", signal_dumps);
    return exit_dump;
}

/* A run takes 1 to 2 s on 2 cores: a run still going after this has hung. */
enum { STRESS_LIMIT_S = 120 };

/* Runs fixture_stress under QAUDIT_STACKS=mode in dir (killed after STRESS_LIMIT_S) and reads
 * the counts it prints of its own blocks; returns its pid. */
static pid_t run_stress(const char *mode, const char *dir, struct stress_counts *c)
{
    char pattern[700], out[700], err[700], stacks[64];
    snprintf(pattern, sizeof pattern, "%s/d-%%p-%%n.json", dir);
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    snprintf(stacks, sizeof stacks, "QAUDIT_STACKS=%s", mode);
    const char *argv[] = {FIXTURE("fixture_stress"), FIXTURE_LIB_DIR "/libfixture_plugin.so", NULL};
    const char *extra[] = {stacks, NULL};
    struct env e;
    struct foreign_run run = {.argv = argv,
                              .env = base_env(&e, pattern, true),
                              .extra = extra,
                              .out = out,
                              .err = err,
                              .limit_s = STRESS_LIMIT_S};
    int status = foreign_run(&run);
    char *said = slurp(err, NULL);
    if (status == RUN_TIMED_OUT)
        fail_msg("%s: still running after %d s (killed); stderr:\n%.2000s", mode, STRESS_LIMIT_S,
                 said);
    if (status != 0)
        fail_msg("%s: exit %d; stderr:\n%.2000s", mode, status, said);
    free(said);
    char *text = slurp(out, NULL);
    int fields = sscanf(text,
                        "workers %ld allocs %ld frees, short threads %ld allocs %ld frees, "
                        "child %d made %d, plugin loads %d, signals %d",
                        &c->workers, &c->worker_frees, &c->shorts, &c->short_frees, &c->child,
                        &c->child_blocks, &c->plugin_loads, &c->signals);
    free(text);
    assert_int_equal(fields, 8);
    assert_int_equal(c->workers, 16 * 20000);
    assert_int_equal(c->shorts, 20000);
    assert_int_equal(c->signals, 50);
    assert_int_equal(c->plugin_loads, 200);
    return run.pid;
}

/* The program's own blocks, each kind in a bucket of its own, counted exactly; with a stack for
 * every allocation (always, fp), each kind's one call site holds them all, every one freed. */
static void stress(const char *mode)
{
    char dir[600];
    in_work(dir, sizeof dir, "stress");
    struct stress_counts c;
    pid_t pid = run_stress(mode, dir, &c);
    bool every_stack = strcmp(mode, "always") == 0 || strcmp(mode, "fp") == 0;
    json_t *parent = parent_exit_dump(dir, pid);
    assert_count("workers' blocks (449..464 bytes)", requested_bucket(parent, 449), c.workers);
    assert_count("short threads' blocks (465..480)", requested_bucket(parent, 465), c.shorts);
    assert_count("the child's sizes (481..496) in the parent", requested_bucket(parent, 481), 0);
    if (every_stack) {
        assert_site_balanced(parent, c.workers, "workers' blocks");
        assert_site_balanced(parent, c.shorts, "short threads' blocks");
    }
    json_decref(parent);
    json_t *child = dump_n(dir, c.child, 0);
    if (child == NULL)
        fail_msg("no dump of the child forked from a worker (pid %d)", c.child);
    assert_string_equal(reason(child), "exit");
    assert_count("the child's blocks (481..496)", requested_bucket(child, 481), c.child_blocks);
    assert_count("workers' sizes (449..464) in the child", requested_bucket(child, 449), 0);
    if (every_stack)
        assert_site_balanced(child, c.child_blocks, "forked child's blocks");
    json_decref(child);
}

static void test_stress_off(void **state)
{
    (void)state;
    stress("off");
}

static void test_stress_sampled_64(void **state)
{
    (void)state;
    stress("sampled:64");
}

static void test_stress_sampled_4096b(void **state)
{
    (void)state;
    stress("sampled:4096b");
}

static void test_stress_always(void **state)
{
    (void)state;
    stress("always");
}

static void test_stress_fp(void **state)
{
    (void)state;
    stress("fp");
}

static void test_stress_queue(void **state)
{
    (void)state;
    stress("queue");
}

int foreign_stress(void)
{
    const struct CMUnitTest tests[] = {FOREIGN_TEST(test_stress_off),
                                       FOREIGN_TEST(test_stress_sampled_64),
                                       FOREIGN_TEST(test_stress_sampled_4096b),
                                       FOREIGN_TEST(test_stress_always),
                                       FOREIGN_TEST(test_stress_fp),
                                       FOREIGN_TEST(test_stress_queue)};
    return cmocka_run_group_tests_name("stress", tests, NULL, NULL);
}
