/* test_servers nginx: Debian's nginx as it runs: started as root, a master that daemonizes and
 * two workers as www-data, under a bounded load of curl, then `nginx -s reload` (two new
 * workers) and `nginx -s quit`; natively and under `qaudit run`, with a snapshot of a worker
 * taken with no setting. Replies and logs as native; every process's dump sound (servers.h). */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "foreign_common.h"
#include "foreign_run.h"
#include "harness.h"
#include "servers.h"

#define NGINX "/usr/sbin/nginx"
#define WORKER "nginx: worker process"
#define FIRST_LOAD 400 /* requests, 8 at a time, before the reload */
#define SECOND_LOAD 200

/* What a run left to check: its processes and the snapshot of a worker. */
struct nginx_run {
    struct server_run run;
    pid_t master, workers[2], reloaded[2];
    struct snapshot snapshot;
};

static struct nginx_run native, preloaded;

static const char *const paths[] = {"/",        "/p1.html", "/p2.html",   "/p3.html",   "/p4.html",
                                    "/missing", "/api/a",   "/api/b?x=1", "/p2.html?q", NULL};

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    spill(path, text);
    assert_int_equal(chmod(path, 0644), 0);
}

/* The prefix: conf/nginx.conf, html/ with pages of 1 KB to 100 KB, logs/. */
static void write_prefix(const struct server_run *r, int port)
{
    char dir[400], conf[2000];
    static const size_t sizes[] = {0, 1000, 10000, 40000, 100000};
    snprintf(dir, sizeof dir, "%s/conf", r->dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(conf, sizeof conf,
             "user www-data;\n"
             "worker_processes 2;\n"
             "pid %s/logs/nginx.pid;\n"
             "error_log %s/logs/error.log notice;\n"
             "events { worker_connections 128; }\n"
             "http {\n"
             "  default_type text/plain;\n"
             "  access_log %s/logs/access.log;\n"
             "  server {\n"
             "    listen 127.0.0.1:%d;\n"
             "    root %s/html;\n"
             "    location /api/ { return 200 \"api $uri $args\\n\"; }\n"
             "  }\n"
             "}\n",
             r->dir, r->dir, r->dir, port, r->dir);
    write_file(dir, "nginx.conf", conf);
    snprintf(dir, sizeof dir, "%s/html", r->dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    write_file(dir, "index.html", "hello from nginx\n");
    for (int i = 1; i <= 4; i++) {
        char name[32], *page = malloc(sizes[i] + 1);
        for (size_t k = 0; k < sizes[i]; k++)
            page[k] = k % 64 == 63 ? '\n' : (char)('a' + (k * 7 + (size_t)i) % 26);
        page[sizes[i]] = '\0';
        snprintf(name, sizeof name, "p%d.html", i);
        write_file(dir, name, page);
        free(page);
    }
    snprintf(dir, sizeof dir, "%s/logs", r->dir);
    assert_int_equal(mkdir(dir, 0755), 0);
}

/* nginx -p DIR -c DIR/conf/nginx.conf -e DIR/logs/error.log [-s SIGNAL], under the run. */
static int nginx(const struct server_run *r, const char *name, const char *signal)
{
    char prefix[400], conf[400], log[400];
    snprintf(prefix, sizeof prefix, "%s/", r->dir);
    snprintf(conf, sizeof conf, "%s/conf/nginx.conf", r->dir);
    snprintf(log, sizeof log, "%s/logs/error.log", r->dir);
    const char *argv[] = {NGINX,  "-p", prefix, "-c", conf, "-e", log, signal ? "-s" : NULL,
                          signal, NULL};
    return run_command(r, name, argv, 60);
}

static bool any_of(pid_t pid, const pid_t *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == pid)
            return true;
    return false;
}

/* After a reload: the old workers gone, two new ones there. */
static void wait_reloaded(struct nginx_run *n)
{
    for (int tries = 0;; tries++) {
        pid_t now[4];
        size_t count = children_of(n->master, WORKER, now, 4);
        bool fresh = count == 2 && !any_of(now[0], n->workers, 2) &&
                     !any_of(now[1], n->workers, 2) && !process_exists(n->workers[0]) &&
                     !process_exists(n->workers[1]);
        if (fresh) {
            memcpy(n->reloaded, now, sizeof n->reloaded);
            return;
        }
        if (tries >= 6000)
            fail_msg("nginx %d: no two new workers 60 s after the reload", (int)n->master);
        usleep(10000);
    }
}

/* One run: start, bodies, load, (snapshot), reload, bodies, load, quit; nothing left. */
static void nginx_run(struct nginx_run *n, bool qaudit)
{
    struct server_run *r = &n->run;
    server_run_init(r, qaudit, NULL);
    int port = free_port();
    write_prefix(r, port);
    char pid_file[400];
    snprintf(pid_file, sizeof pid_file, "%s/logs/nginx.pid", r->dir);

    assert_int_equal(nginx(r, "start", NULL), 0);
    n->master = wait_pid_file(pid_file);
    wait_listening(port);
    wait_children(n->master, WORKER, 2, n->workers, 2);
    http_bodies(r, "bodies", port, paths);
    http_load(r, "first", port, paths, FIRST_LOAD);
    if (qaudit)
        take_snapshot(r, n->workers[0], &n->snapshot);

    assert_int_equal(nginx(r, "reload", "reload"), 0);
    wait_reloaded(n);
    http_bodies(r, "bodies-reloaded", port, paths);
    http_load(r, "second", port, paths, SECOND_LOAD);

    assert_int_equal(nginx(r, "quit", "quit"), 0);
    assert_int_equal(wait_exit_of(n->master), 0); /* ours: the test is a subreaper */
    assert_nothing_left();
}

static int nginx_setup(void **state)
{
    require(NGINX, "nginx");
    require("/usr/bin/curl", "curl");
    server_setup(state);
    nginx_run(&native, false);
    nginx_run(&preloaded, true);
    return 0;
}

static void test_nginx_replies_as_native(void **state)
{
    (void)state;
    assert_same_log(&native.run, &preloaded.run, "bodies.out", false, false);
    assert_same_log(&native.run, &preloaded.run, "bodies-reloaded.out", false, false);
    assert_same_log(&native.run, &preloaded.run, "first-load.out", false, true);
    assert_same_log(&native.run, &preloaded.run, "second-load.out", false, true);
}

/* The master's "signal 17 (SIGCHLD) received" and "signal 29 (SIGIO) received" lines come as
 * the kernel merges signals, natively too: they are left out of the comparison. */
static void without_merged_signals(const struct server_run *r)
{
    char *log = run_file(r, "logs/error.log"), *kept = malloc(strlen(log) + 1), *k = kept;
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        char text[1024];
        snprintf(text, sizeof text, "%.*s", (int)len, line);
        if (strstr(text, "(SIGCHLD) received") == NULL && strstr(text, "(SIGIO) received") == NULL)
            k = (char *)memcpy(k, line, len) + len;
        line += len;
    }
    *k = '\0';
    char path[400];
    snprintf(path, sizeof path, "%s/error.compared", r->dir);
    spill(path, kept);
    free(log), free(kept);
}

static void test_nginx_logs_as_native(void **state)
{
    (void)state;
    without_merged_signals(&native.run);
    without_merged_signals(&preloaded.run);
    assert_same_log(&native.run, &preloaded.run, "error.compared", true, true);
    assert_same_log(&native.run, &preloaded.run, "logs/access.log", true, true);
    static const char *const commands[] = {"start", "reload", "quit"};
    for (size_t i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s.out", commands[i]);
        assert_same_log(&native.run, &preloaded.run, name, true, false);
        snprintf(name, sizeof name, "%s.err", commands[i]);
        assert_same_log(&native.run, &preloaded.run, name, true, false);
    }
}

static void test_nginx_no_negative_figure(void **state)
{
    (void)state;
    assert_no_negative_figure(&preloaded.run);
    assert_unwinds_agree(preloaded.run.out);
}

static void test_nginx_each_dump_reported_alone(void **state)
{
    (void)state;
    assert_each_dump_reported(&preloaded.run);
}

static void test_nginx_dumps_merged_count_once(void **state)
{
    (void)state;
    assert_merged_once(&preloaded.run);
}

/* The launcher, the master, four workers and the two signalling nginx: eight processes. */
static void test_nginx_every_process_left_a_final_dump(void **state)
{
    (void)state;
    const struct nginx_run *n = &preloaded;
    pid_t pids[] = {n->master, n->workers[0], n->workers[1], n->reloaded[0], n->reloaded[1]};
    assert_final_dumps(&n->run, pids, 5, 8);
}

static void test_nginx_forked_children_keep_inheritance_apart(void **state)
{
    (void)state;
    const struct nginx_run *n = &preloaded;
    assert_inherited(&n->run, n->master); /* forked by the launcher as it daemonized */
    for (int i = 0; i < 2; i++) {
        assert_inherited(&n->run, n->workers[i]);
        assert_inherited(&n->run, n->reloaded[i]);
    }
}

/* A worker under the load (the one that served most) has memory over time at its period, not
 * a point at its start and one at its end (issue 39: 2 over a 3 s load). */
static void test_nginx_worker_under_load_has_a_timeline(void **state)
{
    (void)state;
    assert_busiest_has_timeline(&preloaded.run, WORKER);
}

static void test_nginx_no_dump_outside_the_run(void **state)
{
    (void)state;
    static const char *const watched[] = {
        "/", "/usr/sbin", "/var/www", "/var/lib/nginx", "/var/log/nginx", NULL};
    assert_no_stray_dump(&preloaded.run, watched);
}

/* The master daemonized and wrote its title over its environment: qaudit run, ending with the
 * launcher, still names it among the run's processes still running. */
static void test_nginx_run_names_the_daemon_still_running(void **state)
{
    (void)state;
    assert_survivor_named(&preloaded.run, "start.err", preloaded.master);
}

/* The run ended with the launcher; its last line's command, run once nginx -s quit ended the
 * daemon, reports the workers (before and after the reload, as www-data their dumps went to the
 * fallback directory), and the requests they served: one request pool each, under
 * ngx_http_create_request. */
static void test_nginx_next_command_reports_the_requests(void **state)
{
    (void)state;
    const struct nginx_run *n = &preloaded;
    json_t *report = next_report(&n->run, "start.err");
    pid_t workers[] = {n->workers[0], n->workers[1], n->reloaded[0], n->reloaded[1]};
    for (size_t i = 0; i < 4; i++)
        if (!report_holds_pid(report, workers[i]))
            fail_msg("the next command's report holds no dump of the worker %d", (int)workers[i]);
    uint64_t requests = 2 * (sizeof paths / sizeof paths[0] - 1) + FIRST_LOAD + SECOND_LOAD;
    uint64_t served = allocs_through(report, "ngx_http_create_request");
    json_decref(report);
    if (served < requests)
        fail_msg("the next command's report counts %llu request pools for %llu requests",
                 (unsigned long long)served, (unsigned long long)requests);
}

static void test_nginx_worker_snapshot_without_settings(void **state)
{
    (void)state;
    assert_snapshot_taken(&preloaded.run, &preloaded.snapshot);
    assert_snapshot_kept(&preloaded.snapshot);
}

int servers_nginx(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nginx_replies_as_native),
        cmocka_unit_test(test_nginx_logs_as_native),
        cmocka_unit_test(test_nginx_no_negative_figure),
        cmocka_unit_test(test_nginx_each_dump_reported_alone),
        cmocka_unit_test(test_nginx_dumps_merged_count_once),
        cmocka_unit_test(test_nginx_every_process_left_a_final_dump),
        cmocka_unit_test(test_nginx_forked_children_keep_inheritance_apart),
        cmocka_unit_test(test_nginx_worker_under_load_has_a_timeline),
        cmocka_unit_test(test_nginx_no_dump_outside_the_run),
        cmocka_unit_test(test_nginx_run_names_the_daemon_still_running),
        cmocka_unit_test(test_nginx_worker_snapshot_without_settings),
        cmocka_unit_test(test_nginx_next_command_reports_the_requests),
    };
    return cmocka_run_group_tests_name("nginx", tests, nginx_setup, server_teardown);
}
