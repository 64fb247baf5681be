/* test_servers postgres: Debian's PostgreSQL 15 as the postgres user: initdb in the run's
 * directory, pg_ctl start on a free port with the socket in the run's directory, pgbench -i, a
 * psql session whose backend is snapshotted with no setting, pgbench on one connection (one
 * backend under load), a short pgbench -C (a backend per transaction), fast stop; then a second
 * start, pgbench -C and immediate stop. Natively and under `qaudit run` (every command under it);
 * replies and logs as native; every process's dump sound (servers.h), none in PostgreSQL's own
 * directories. */
#include <fcntl.h>
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

#define PG_BIN "/usr/lib/postgresql/15/bin"
#define MAX_AUX 16

/* What a run left to check. */
struct pg_run {
    struct server_run run;
    int port;
    int status[8]; /* the commands' exit statuses, in order */
    size_t commands;
    pid_t postmaster[2], backend;
    pid_t aux[MAX_AUX]; /* the postmasters' children seen while they ran */
    size_t naux;
    struct snapshot snapshot;
};

static struct pg_run native, preloaded;

static void record(struct pg_run *p, int status)
{
    if (p->commands < sizeof p->status / sizeof p->status[0])
        p->status[p->commands++] = status;
}

static const char *in_dir(const struct server_run *r, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", r->dir, name);
    return buf;
}

static void pg_ctl_start(struct pg_run *p, int n)
{
    struct server_run *r = &p->run;
    char data[400], log[400], options[600], name[16], pid_file[400];
    snprintf(options, sizeof options, "-p %d -k %s/sock -c listen_addresses=127.0.0.1 -c fsync=off",
             p->port, r->dir);
    snprintf(name, sizeof name, "pg%d.log", n + 1);
    const char *argv[] = {PG_BIN "/pg_ctl",
                          "-D",
                          in_dir(r, "data", data, sizeof data),
                          "-l",
                          in_dir(r, name, log, sizeof log),
                          "-w",
                          "-t",
                          "120",
                          "-o",
                          options,
                          "start",
                          NULL};
    snprintf(name, sizeof name, "start%d", n + 1);
    record(p, run_command(r, name, argv, 150));
    p->postmaster[n] = wait_pid_file(in_dir(r, "data/postmaster.pid", pid_file, sizeof pid_file));
    wait_listening(p->port);
}

static void pg_ctl_stop(struct pg_run *p, int n, const char *mode)
{
    char data[400], name[16];
    const char *argv[] = {PG_BIN "/pg_ctl",
                          "-D",
                          in_dir(&p->run, "data", data, sizeof data),
                          "-m",
                          mode,
                          "-w",
                          "-t",
                          "120",
                          "stop",
                          NULL};
    snprintf(name, sizeof name, "stop%d", n + 1);
    record(p, run_command(&p->run, name, argv, 150));
    record(p, wait_exit_of(p->postmaster[n])); /* ours: the test is a subreaper */
}

/* pgbench -C: a connection, so a backend, per transaction; clients transactions each. */
static void pgbench_connect_each(struct pg_run *p, const char *name, const char *transactions)
{
    char port[16];
    snprintf(port, sizeof port, "%d", p->port);
    const char *argv[] = {PG_BIN "/pgbench", "-h", "127.0.0.1", "-p", port, "-U",
                          "postgres",        "-C", "-c",        "2",  "-t", transactions,
                          "postgres",        NULL};
    record(p, run_client(&p->run, name, argv, 300));
}

/* pgbench with one client on one connection, so one backend under load for its transactions
 * (bounded by count). */
static void pgbench_one_backend(struct pg_run *p, const char *name, const char *transactions)
{
    char port[16];
    snprintf(port, sizeof port, "%d", p->port);
    const char *argv[] = {
        PG_BIN "/pgbench", "-h",       "127.0.0.1", "-p", port, "-U", "postgres", "-c", "1", "-t",
        transactions,      "postgres", NULL};
    record(p, run_client(&p->run, name, argv, 300));
}

/* The postmaster's children now (checkpointer, writers, launchers, backends). */
static void note_aux(struct pg_run *p, pid_t postmaster)
{
    pid_t now[MAX_AUX];
    size_t n = children_of(postmaster, "postgres: ", now, MAX_AUX);
    for (size_t i = 0; i < n && p->naux < MAX_AUX; i++)
        p->aux[p->naux++] = now[i];
}

/* A psql session held open on a FIFO: its backend's pid (through \o into a file), snapshotted
 * under qaudit, one query, then \q. */
static void psql_session(struct pg_run *p)
{
    struct server_run *r = &p->run;
    char fifo[400], port[16], sock[400], pid_file[400], lines[600];
    snprintf(port, sizeof port, "%d", p->port);
    in_dir(r, "psql.in", fifo, sizeof fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *argv[] = {PG_BIN "/psql",
                          "-X",
                          "-q",
                          "-A",
                          "-t",
                          "-v",
                          "ON_ERROR_STOP=1",
                          "-h",
                          in_dir(r, "sock", sock, sizeof sock),
                          "-p",
                          port,
                          "-U",
                          "postgres",
                          "-d",
                          "postgres",
                          NULL};
    pid_t psql = start_client(r, "psql", argv, fifo);
    int in = open(fifo, O_WRONLY); /* returns once psql opened its end */
    assert_true(in >= 0);
    int len = snprintf(lines, sizeof lines, "\\o %s\nselect pg_backend_pid();\n\\o\n",
                       in_dir(r, "backend.pid", pid_file, sizeof pid_file));
    assert_int_equal(write(in, lines, (size_t)len), len);
    p->backend = wait_pid_file(pid_file);
    note_aux(p, p->postmaster[0]);
    if (r->qaudit)
        take_snapshot(r, p->backend, &p->snapshot);
    len = snprintf(lines, sizeof lines,
                   "select count(*), sum(abalance) from pgbench_accounts;\n\\q\n");
    assert_int_equal(write(in, lines, (size_t)len), len);
    close(in);
    record(p, wait_exit_of(psql));
}

static void pg_run(struct pg_run *p, bool qaudit)
{
    struct server_run *r = &p->run;
    server_run_init(r, qaudit, "postgres");
    r->default_out = true; /* qaudit run as a user first tries it: no --out, in a directory */
    char sock[400], data[400], port[16];
    const char *sock_dir = in_dir(r, "sock", sock, sizeof sock);
    assert_int_equal(mkdir(sock_dir, 0700), 0);
    give_to(sock_dir, "postgres", 0700);
    p->port = free_port();
    snprintf(port, sizeof port, "%d", p->port);

    const char *initdb[] = {PG_BIN "/initdb",
                            "-D",
                            in_dir(r, "data", data, sizeof data),
                            "-A",
                            "trust",
                            "-U",
                            "postgres",
                            "-N",
                            NULL};
    record(p, run_command(r, "initdb", initdb, 300));
    pg_ctl_start(p, 0);
    const char *ready[] = {PG_BIN "/pg_isready", "-h", sock_dir, "-p", port, NULL};
    record(p, run_client(r, "isready", ready, 60));
    const char *init[] = {PG_BIN "/pgbench", "-i",       "-q", "-h", sock_dir, "-p", port, "-U",
                          "postgres",        "postgres", NULL};
    record(p, run_client(r, "pgbench-i", init, 300));
    psql_session(p);
    pgbench_one_backend(p, "pgbench-1", "2000");
    pgbench_connect_each(p, "pgbench-C1", "10");
    pg_ctl_stop(p, 0, "fast");

    pg_ctl_start(p, 1);
    note_aux(p, p->postmaster[1]);
    pgbench_connect_each(p, "pgbench-C2", "5");
    pg_ctl_stop(p, 1, "immediate");
    assert_nothing_left();
}

static int pg_setup(void **state)
{
    require(PG_BIN "/postgres", "postgresql-15");
    require(PG_BIN "/pgbench", "postgresql-15");
    server_setup(state);
    pg_run(&native, false);
    pg_run(&preloaded, true);
    return 0;
}

/* pgbench's report without its times (latency, tps, connection time). */
static void without_times(const struct server_run *r, const char *name)
{
    char *text = run_file(r, name), *kept = calloc(strlen(text) + 1, 1), *k = kept;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        char copy[512];
        snprintf(copy, sizeof copy, "%.*s", (int)len, line);
        if (!strstr(copy, "latency") && !strstr(copy, "tps") && !strstr(copy, "connection time"))
            k = (char *)memcpy(k, line, len) + len;
        line += len;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/%s.compared", r->dir, name);
    spill(path, kept);
    free(text), free(kept);
}

static void test_postgres_replies_as_native(void **state)
{
    (void)state;
    assert_int_equal(native.commands, preloaded.commands);
    for (size_t i = 0; i < native.commands; i++)
        if (native.status[i] != preloaded.status[i])
            fail_msg("command %zu: exit %d natively, %d under qaudit", i, native.status[i],
                     preloaded.status[i]);
    assert_same_log(&native.run, &preloaded.run, "psql.out", false, false);
    static const char *const runs[] = {"pgbench-1.out", "pgbench-C1.out", "pgbench-C2.out"};
    for (size_t i = 0; i < 3; i++) {
        without_times(&native.run, runs[i]);
        without_times(&preloaded.run, runs[i]);
        char name[64];
        snprintf(name, sizeof name, "%s.compared", runs[i]);
        assert_same_log(&native.run, &preloaded.run, name, false, false);
    }
    char *counted = run_file(&preloaded.run, "pgbench-C1.out");
    assert_non_null(strstr(counted, "number of transactions actually processed: 20/20"));
    free(counted);
}

static void test_postgres_logs_as_native(void **state)
{
    (void)state;
    static const char *const logs[] = {"pg1.log",    "pg2.log",    "initdb.out", "initdb.err",
                                       "start1.out", "start1.err", "stop1.out",  "stop1.err",
                                       "start2.out", "start2.err", "stop2.out",  "stop2.err"};
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++)
        assert_same_log(&native.run, &preloaded.run, logs[i], true, strstr(logs[i], ".log"));
}

static void test_postgres_no_negative_figure(void **state)
{
    (void)state;
    assert_no_negative_figure(&preloaded.run);
    assert_unwinds_agree(preloaded.run.out);
}

static void test_postgres_each_dump_reported_alone(void **state)
{
    (void)state;
    assert_each_dump_reported(&preloaded.run);
}

static void test_postgres_dumps_merged_count_once(void **state)
{
    (void)state;
    assert_merged_once(&preloaded.run);
}

/* Both postmasters, the backend, the auxiliary processes; at least the commands (initdb and its
 * postgres runs, pg_ctl four times), both postmasters, five auxiliaries each and 30 backends. */
static void test_postgres_every_process_left_a_final_dump(void **state)
{
    (void)state;
    const struct pg_run *p = &preloaded;
    pid_t pids[MAX_AUX + 3];
    size_t n = 0;
    pids[n++] = p->postmaster[0], pids[n++] = p->postmaster[1], pids[n++] = p->backend;
    for (size_t i = 0; i < p->naux; i++)
        pids[n++] = p->aux[i];
    assert_final_dumps(&p->run, pids, n, 4 + 2 + 10 + 30);
}

static void test_postgres_forked_children_keep_inheritance_apart(void **state)
{
    (void)state;
    assert_inherited(&preloaded.run, preloaded.backend);
    for (size_t i = 0; i < preloaded.naux; i++)
        assert_inherited(&preloaded.run, preloaded.aux[i]);
}

/* The backend of pgbench's 2,000 transactions on one connection has memory over time at its
 * period (issue 39: backends had 3 points over 10 s). */
static void test_postgres_backend_under_load_has_a_timeline(void **state)
{
    (void)state;
    assert_busiest_has_timeline(&preloaded.run, "postgres: postgres postgres 127.0.0.1");
}

static void test_postgres_no_dump_outside_the_run(void **state)
{
    (void)state;
    static const char *const watched[] = {PG_BIN, "/", "/var/lib/postgresql", NULL};
    assert_no_stray_dump(&preloaded.run, watched);
}

/* pg_ctl ends once the postmaster it started is ready; qaudit run, ending with it, names the
 * postmaster (which wrote its process title over its environment) as still running. */
static void test_postgres_run_names_the_postmaster_still_running(void **state)
{
    (void)state;
    assert_survivor_named(&preloaded.run, "start1.err", preloaded.postmaster[0]);
    assert_survivor_named(&preloaded.run, "start2.err", preloaded.postmaster[1]);
}

/* The dumps of backends (a process title "postgres: USER DB ...") forked by postmaster that a
 * report holds. */
static size_t backends_in(json_t *report, pid_t postmaster)
{
    size_t i, count = 0;
    json_t *dump;
    json_array_foreach(json_object_get(report, "dumps"), i, dump)
    {
        const char *argv = json_string_value(json_object_get(dump, "argv"));
        json_t *from = json_object_get(json_object_get(dump, "forked_from"), "pid");
        count += argv != NULL && strncmp(argv, "postgres: postgres postgres ", 28) == 0 &&
                 json_integer_value(from) == postmaster;
    }
    return count;
}

/* Each pg_ctl start's run ends once the postmaster is ready; its last line's command, run once
 * the server stopped, reports the postmaster and the backends that served the clients: pgbench
 * -i's, psql's and one per transaction of pgbench -C (2 clients, 10 then 5 transactions). */
static void test_postgres_next_command_reports_the_backends(void **state)
{
    (void)state;
    static const char *const starts[] = {"start1.err", "start2.err"};
    static const size_t served[] = {2 + 2 * 10, 2 * 5};
    for (size_t n = 0; n < 2; n++) {
        json_t *report = next_report(&preloaded.run, starts[n]);
        bool postmaster = report_holds_pid(report, preloaded.postmaster[n]);
        size_t backends = backends_in(report, preloaded.postmaster[n]);
        bool psql = n > 0 || report_holds_pid(report, preloaded.backend);
        json_decref(report);
        if (!postmaster || !psql || backends < served[n])
            fail_msg(
                "%s: the next command's report holds %s postmaster %d, %zu backends of the %zu "
                "that served, %s psql's",
                starts[n], postmaster ? "the" : "no", (int)preloaded.postmaster[n], backends,
                served[n], psql ? "and" : "not");
    }
}

static void test_postgres_backend_snapshot_without_settings(void **state)
{
    (void)state;
    assert_snapshot_taken(&preloaded.run, &preloaded.snapshot);
    assert_snapshot_kept(&preloaded.snapshot);
}

int servers_postgres(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_postgres_replies_as_native),
        cmocka_unit_test(test_postgres_logs_as_native),
        cmocka_unit_test(test_postgres_no_negative_figure),
        cmocka_unit_test(test_postgres_each_dump_reported_alone),
        cmocka_unit_test(test_postgres_dumps_merged_count_once),
        cmocka_unit_test(test_postgres_every_process_left_a_final_dump),
        cmocka_unit_test(test_postgres_forked_children_keep_inheritance_apart),
        cmocka_unit_test(test_postgres_backend_under_load_has_a_timeline),
        cmocka_unit_test(test_postgres_no_dump_outside_the_run),
        cmocka_unit_test(test_postgres_run_names_the_postmaster_still_running),
        cmocka_unit_test(test_postgres_backend_snapshot_without_settings),
        cmocka_unit_test(test_postgres_next_command_reports_the_backends),
    };
    return cmocka_run_group_tests_name("postgres", tests, pg_setup, server_teardown);
}
