/* test_foreign host: the host-safety repros of issue 12 (fds 3 and 4, close_range, dup2 over
 * every fd, a double-fork daemon, the dump signal claimed by the program, one file per process):
 * each program behaves byte for byte as natively. */
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

/* A dump of pid in dir as d-PID-N.json, or NULL. */
/* The process left exactly the dumps of these reasons, in order, with QAUDIT_OUT=d-%p-%n. */
static void assert_dumps(const char *dir, pid_t pid, const char *const *reasons)
{
    int n = 0;
    for (; reasons[n]; n++) {
        json_t *d = dump_n(dir, pid, n);
        if (d == NULL)
            fail_msg("process %d: no dump %d (%s) in %s", (int)pid, n, reasons[n], dir);
        if (strcmp(reason(d), reasons[n]) != 0)
            fail_msg("process %d: dump %d is for \"%s\", not \"%s\"", (int)pid, n, reason(d),
                     reasons[n]);
        json_decref(d);
    }
    json_t *more = dump_n(dir, pid, n);
    if (more != NULL)
        fail_msg("process %d wrote more dumps than the %d expected (one more for \"%s\")", (int)pid,
                 n, reason(more));
}

/* bash under the preload, QAUDIT_OUT=work/d-%p-%n.json; its stdout. */
static char *preloaded_bash(const char *script, pid_t *pid, int *status)
{
    char pattern[600], out[600];
    snprintf(pattern, sizeof pattern, "%s/d-%%p-%%n.json", work);
    snprintf(out, sizeof out, "%s/stdout", work);
    const char *argv[] = {"/usr/bin/bash", "-c", script, NULL};
    struct env e;
    struct foreign_run run = {
        .argv = argv, .env = base_env(&e, pattern, true), .dir = work, .out = out, .limit_s = 60};
    *status = foreign_run(&run);
    *pid = run.pid;
    return slurp(out, NULL);
}

/* Issue 12's first repro: the program's fd 3, opened after start-up, is read to its end after
 * a dump signal. The handler is the preload's from before bash's main; bash reads on once the
 * dump's file is there (d-PID-0.json, renamed into place when finished). */
static void test_fd3_input_survives_the_dump_signal(void **state)
{
    (void)state;
    char script[1200], path[600];
    snprintf(path, sizeof path, "%s/l.txt", work);
    FILE *f = fopen(path, "w");
    for (int i = 1; i <= 1000; i++)
        fprintf(f, "%d\n", i);
    fclose(f);
    snprintf(script, sizeof script,
             "exec 3<%s; kill -USR2 $$; until [ -e d-$$-0.json ]; do sleep 0.01; done; n=0; "
             "while read -r l <&3; do n=$((n+1)); done; echo $n",
             path);
    pid_t pid;
    int status;
    char *out = preloaded_bash(script, &pid, &status);
    assert_int_equal(status, 0);
    assert_string_equal(out, "1000\n");
    assert_dumps(work, pid, (const char *[]){"signal", "exit", NULL});
    free(out);
}

/* The second repro: writes on the program's fd 4 around a dump signal (the second once the dump
 * is written). */
static void test_fd4_output_survives_the_dump_signal(void **state)
{
    (void)state;
    char script[1200], path[600];
    snprintf(path, sizeof path, "%s/o", work);
    snprintf(script, sizeof script,
             "exec 4>%s; echo A >&4; kill -USR2 $$; until [ -e d-$$-0.json ]; do sleep 0.01; "
             "done; echo B >&4",
             path);
    pid_t pid;
    int status;
    free(preloaded_bash(script, &pid, &status));
    assert_int_equal(status, 0);
    char *o = slurp(path, NULL);
    assert_string_equal(o, "A\nB\n");
    assert_dumps(work, pid, (const char *[]){"signal", "exit", NULL});
    free(o);
}

/* fixture_hostile MODE natively and under the preload (QAUDIT_OUT=d-%p-%n.json), each in its
 * own directory; stdout, stderr without qaudit's lines, and exit status must match. With
 * reap, the runs wait for every descendant (a daemon): this process becomes a subreaper. */
struct hostile {
    char native[600], preload[600];
    pid_t pid;        /* the preloaded run's */
    char *qaudit_err; /* its whole stderr */
};

static int run_hostile(const char *mode, const char *dir, bool preload, pid_t *pid)
{
    char pattern[700], out[700], err[700];
    snprintf(pattern, sizeof pattern, "%s/d-%%p-%%n.json", dir);
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    const char *argv[] = {FIXTURE("fixture_hostile"), mode, dir, NULL};
    struct env e;
    struct foreign_run run = {.argv = argv,
                              .env = base_env(&e, pattern, preload),
                              .dir = dir,
                              .out = out,
                              .err = err,
                              .limit_s = 120};
    int status = foreign_run(&run);
    *pid = run.pid;
    /* A daemon was re-parented to us (the subreaper): wait for it too. */
    for (int i = 0; i < 12000 && waitpid(-1, NULL, WNOHANG) >= 0; i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    return status;
}

static void compare_hostile(const char *mode, struct hostile *h)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    in_work(h->native, sizeof h->native, "native");
    in_work(h->preload, sizeof h->preload, "qaudit");
    pid_t native_pid;
    int native_status = run_hostile(mode, h->native, false, &native_pid);
    int status = run_hostile(mode, h->preload, true, &h->pid);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    assert_int_equal(native_status, 0);
    assert_int_equal(status, native_status);
    h->qaudit_err = assert_same_output(h->native, h->preload, "stdout", "stderr");
}

static void test_close_range(void **state)
{
    (void)state;
    struct hostile h;
    compare_hostile("close_range", &h);
    assert_dumps(h.preload, h.pid, (const char *[]){"signal", "exit", NULL});
    free(h.qaudit_err);
}

static void test_dup2_over_every_fd(void **state)
{
    (void)state;
    struct hostile h;
    compare_hostile("dup2", &h);
    assert_dumps(h.preload, h.pid, (const char *[]){"signal", "exit", NULL});
    free(h.qaudit_err);
}

/* The daemon's own report (result.txt) must match too; the daemon, a grandchild that closed
 * every fd, still dumps on the signal and at its exit. */
static void test_double_fork_daemon(void **state)
{
    (void)state;
    struct hostile h;
    compare_hostile("daemon", &h);
    assert_same_file(h.native, h.preload, "result.txt");
    char path[700];
    snprintf(path, sizeof path, "%s/daemon.pid", h.preload);
    char *text = slurp(path, NULL);
    pid_t daemon = atoi(text);
    assert_true(daemon > 0);
    assert_dumps(h.preload, daemon, (const char *[]){"signal", "exit", NULL});
    free(text);
    free(h.qaudit_err);
}

/* The program handles the dump signal itself: its handler sees every signal, it reads its own
 * handler back, and the interposer makes no dump for them and says nothing (nothing is lost:
 * `qaudit snapshot` needs no signal; a line would land in a server's log). */
static void test_own_handler_for_the_dump_signal(void **state)
{
    (void)state;
    struct hostile h;
    compare_hostile("own_handler", &h);
    int lines = count_lines_starting(h.qaudit_err, "qaudit: ");
    if (lines != 0)
        fail_msg("wanted no qaudit line; stderr:\n%s", h.qaudit_err);
    assert_dumps(h.preload, h.pid, (const char *[]){"exit", NULL});
    free(h.qaudit_err);
}

/* The writer thread's files (the dumps asked for, the timeline's /proc reads) never take the
 * number a program's open() gets: 4,000,000 opens during 100 dumps each get the lowest free
 * one, as natively. The dumps asked for may merge; the first is "signal", the last "exit". */
static void test_opens_get_the_lowest_number_during_dumps(void **state)
{
    (void)state;
    struct hostile h;
    compare_hostile("lowest_fd", &h);
    int dumps = 0;
    char last[32] = "";
    for (json_t *d; (d = dump_n(h.preload, h.pid, dumps)) != NULL; dumps++) {
        if (dumps == 0 && strcmp(reason(d), "signal") != 0)
            fail_msg("the first dump is for \"%s\", not \"signal\"", reason(d));
        snprintf(last, sizeof last, "%s", reason(d));
        json_decref(d);
    }
    assert_true(dumps >= 2);
    assert_string_equal(last, "exit");
    free(h.qaudit_err);
}

/* The fourth repro: QAUDIT_OUT without %p and three processes (bash, seq, ls). Each
 * process's exit dump is in a file of its own; a name that carries a pid (nop.PID.json or
 * nop.PID.K.json) carries that dump's. Dumps of exec'd-from images may add files. */
static void test_one_file_per_process(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/nop.json", work);
    const char *argv[] = {"/usr/bin/bash", "-c", "seq 3 >/dev/null; ls / >/dev/null", NULL};
    struct env e;
    struct foreign_run run = {.argv = argv, .env = base_env(&e, out, true), .limit_s = 60};
    assert_int_equal(foreign_run(&run), 0);
    DIR *d = opendir(work);
    struct dirent *entry;
    int exits = 0;
    char names[3][16] = {{0}};
    pid_t pids[3] = {0};
    while ((entry = readdir(d)) != NULL) {
        size_t len = strlen(entry->d_name);
        if (strncmp(entry->d_name, "nop.", 4) != 0 || strstr(entry->d_name, ".tmp"))
            continue;
        if (len < 5 || strcmp(entry->d_name + len - 5, ".json") != 0)
            fail_msg("%s: a dump whose name does not end in .json", entry->d_name);
        snprintf(out, sizeof out, "%s/%s", work, entry->d_name);
        json_t *dump = load(out);
        pid_t pid = (pid_t)num(dump, "process.pid");
        int named = 0;
        if (sscanf(entry->d_name, "nop.%d.", &named) == 1 && named != pid)
            fail_msg("%s holds the dump of process %d", entry->d_name, (int)pid);
        if (strcmp(reason(dump), "exit") == 0) {
            if (exits == 3)
                fail_msg("more than three exit dumps");
            const char *exe = text_of(json_object_get(dump, "process"), "exe");
            const char *slash = strrchr(exe, '/');
            snprintf(names[exits], sizeof names[exits], "%s", slash ? slash + 1 : exe);
            pids[exits++] = pid;
        }
        json_decref(dump);
    }
    closedir(d);
    assert_int_equal(exits, 3);
    assert_true(pids[0] != pids[1] && pids[1] != pids[2] && pids[0] != pids[2]);
    qsort(names, 3, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    assert_string_equal(names[0], "bash");
    assert_string_equal(names[1], "ls");
    assert_string_equal(names[2], "seq");
}

int foreign_host(void)
{
    const struct CMUnitTest tests[] = {FOREIGN_TEST(test_fd3_input_survives_the_dump_signal),
                                       FOREIGN_TEST(test_fd4_output_survives_the_dump_signal),
                                       FOREIGN_TEST(test_close_range),
                                       FOREIGN_TEST(test_dup2_over_every_fd),
                                       FOREIGN_TEST(test_double_fork_daemon),
                                       FOREIGN_TEST(test_own_handler_for_the_dump_signal),
                                       FOREIGN_TEST(test_opens_get_the_lowest_number_during_dumps),
                                       FOREIGN_TEST(test_one_file_per_process)};
    return cmocka_run_group_tests_name("host safety", tests, NULL, NULL);
}
