/* `qaudit snapshot PID` asks the preload for a dump through its control record in the process's
 * memory, sending no signal: on Debian's redis-server (which overwrites its environment with its
 * title), a forked perl child, one blocked at once (its writer started through ptrace), a process
 * without the preload, one with QAUDIT_SIGNAL=off, a bash
 * that traps SIGUSR2, a perl that blocks every signal, a `qaudit run` (its program answers), and
 * a process that cannot write its dump (the preload's reason is passed on). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define QAUDIT SERVER_DIR "/qaudit"
#define REDIS_SERVER "/usr/bin/redis-server"

struct snapshot_result {
    int status;
    char out[4096]; /* its stdout, first line */
    char err[4096]; /* its stderr */
};

/* The processes a test started; a failed test's teardown kills them (a redis must not outlive it).
 */
static pid_t running[2];

static pid_t track(pid_t pid)
{
    for (size_t i = 0; i < sizeof running / sizeof running[0]; i++)
        if (running[i] == 0) {
            running[i] = pid;
            break;
        }
    return pid;
}

static bool maps_preload(pid_t pid)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "r");
    bool found = false;
    while (maps && !found && fgets(line, sizeof line, maps))
        found = strstr(line, "libqaudit-preload") != NULL;
    if (maps)
        fclose(maps);
    return found;
}

/* Waits until the process started under the preload has exec'd and mapped it: before that,
 * pid is still the test's own fork, which has no preload for snapshot to read. */
static pid_t preloaded(pid_t pid)
{
    for (int tries = 0; tries < 6000; tries++) { /* 60 s at most */
        if (maps_preload(pid))
            return pid;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    fail_msg("process %d never mapped the preload", (int)pid);
    return pid;
}

/* The exit status of a tracked process, which needs no killing any more. */
static int finish(pid_t pid)
{
    int status = wait_exit(pid);
    memset(running, 0, sizeof running);
    return status;
}

static int kill_leftovers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof running / sizeof running[0]; i++)
        if (running[i] > 0) {
            kill(running[i], SIGKILL);
            waitpid(running[i], NULL, 0);
            running[i] = 0;
        }
    remove_dir();
    return 0;
}

static void read_file(const char *path, char *buf, size_t size, bool first_line)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    if (first_line)
        buf[strcspn(buf, "\n")] = '\0';
}

/* Runs `qaudit snapshot PID --timeout 20` with its output in files of the dump directory. */
static void snapshot(pid_t target, struct snapshot_result *r)
{
    char out[400], err[400], pid_text[16];
    snprintf(out, sizeof out, "%s/snapshot.out", dump_dir);
    snprintf(err, sizeof err, "%s/snapshot.err", dump_dir);
    snprintf(pid_text, sizeof pid_text, "%d", (int)target);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(e, 2);
        execl(QAUDIT, QAUDIT, "snapshot", pid_text, "--timeout", "20", (char *)NULL);
        _exit(127);
    }
    r->status = wait_exit(pid);
    read_file(out, r->out, sizeof r->out, true);
    read_file(err, r->err, sizeof r->err, false);
}

/* A snapshot that worked: exit 0, and the printed path a finished dump of pid, on request. */
static void assert_snapshot_of(const struct snapshot_result *r, pid_t pid)
{
    if (r->status != 0)
        fail_msg("qaudit snapshot %d: exit %d, stderr: %s", (int)pid, r->status, r->err);
    json_t *d = load(r->out);
    assert_int_equal(num(d, "process.pid"), pid);
    assert_string_equal(json_string_value(json_object_get(d, "reason")), "snapshot");
    json_decref(d);
}

static bool environ_names(pid_t pid, const char *name)
{
    char path[64], buf[65536];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    return n > 0 && memmem(buf, (size_t)n, name, strlen(name)) != NULL;
}

/* redis-server overwrites its environment with its title: snapshot must find the preload's
 * record in its memory, and redis live on. */
static void test_snapshot_of_redis(void **state)
{
    (void)state;
    if (access(REDIS_SERVER, X_OK) != 0)
        fail_msg("%s is missing: run scripts/deps.sh", REDIS_SERVER);
    fresh_dir();
    char port[16], log[400];
    int port_number = free_port();
    snprintf(port, sizeof port, "%d", port_number);
    snprintf(log, sizeof log, "%s/redis.log", dump_dir);
    const char *argv[] = {REDIS_SERVER, "--port", port,     "--bind",    "127.0.0.1", "--save",
                          "",           "--dir",  dump_dir, "--logfile", log,         NULL};
    const char *env[] = {"QAUDIT_SIGNAL=USR1", NULL}; /* not needed any more, nor used */
    pid_t pid = track(start(argv, env));
    bool up = false;
    for (int i = 0; i < 1200 && !up; i++) { /* 60 s at most */
        up = redis_ping(port_number);
        if (!up)
            usleep(50000);
    }
    assert_true(up);
    assert_false(environ_names(pid, "QAUDIT_SIGNAL")); /* what the old snapshot relied on */

    struct snapshot_result r;
    snapshot(pid, &r);
    assert_snapshot_of(&r, pid);
    assert_true(redis_ping(port_number)); /* still serving */
    assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);

    kill(pid, SIGTERM);
    assert_int_equal(finish(pid), 0);
}

/* Starts perl -e script under the preload (dumps in the test's directory), its stdin from
 * stdin_fd when not -1; the script forks and prints its child's pid, which goes into *child. */
static pid_t perl_forker(const char *script, int stdin_fd, pid_t *child)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t parent = track(fork());
    if (parent == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        if (stdin_fd >= 0)
            dup2(stdin_fd, 0);
        char out[400];
        snprintf(out, sizeof out, "%s/dump-%%p.json", dump_dir);
        setenv("LD_PRELOAD", test_preload_path(), 1);
        setenv("QAUDIT_OUT", out, 1);
        execl("/usr/bin/perl", "perl", "-e", script, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char line[32] = {0};
    assert_true(read(fds[0], line, sizeof line - 1) > 0);
    close(fds[0]);
    *child = track((pid_t)atoi(line));
    assert_true(*child > 0);
    return parent;
}

/* A forked child (no exec) answers for itself: its record carries its own pid. */
static void test_snapshot_of_a_forked_child(void **state)
{
    (void)state;
    fresh_dir();
    char stop[400], script[600];
    snprintf(stop, sizeof stop, "%s/stop", dump_dir);
    snprintf(script, sizeof script,
             "$| = 1; my $p = fork; if ($p) { print \"$p\\n\"; waitpid($p, 0); exit 0 }"
             " my @a; until (-e '%s') { push @a, 'x' x 100; shift @a if @a > 50;"
             " select(undef, undef, undef, 0.02) } exit 0",
             stop);
    pid_t child, parent = perl_forker(script, -1, &child);

    struct snapshot_result r;
    snapshot(child, &r);
    assert_snapshot_of(&r, child);

    close(open(stop, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(finish(parent), 0);
}

/* Waits until pid is blocked in read(2) (/proc/PID/syscall names its number first). */
static void wait_in_read(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
    for (int tries = 0; tries < 6000; tries++) { /* 60 s at most */
        FILE *f = fopen(path, "r");
        bool in_read =
            f != NULL && fgets(line, sizeof line, f) != NULL && strncmp(line, "0 ", 2) == 0;
        if (f)
            fclose(f);
        if (in_read)
            return;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    fail_msg("process %d never blocked in read", (int)pid);
}

/* A forked child that blocks at once, never allocating again, has no writer thread (the preload
 * starts a child's lazily): snapshot starts it through ptrace, gets the dump, and the child goes
 * on as it was (its read still waiting, then ended by its own input). */
static void test_idle_forked_child_gets_its_writer_started(void **state)
{
    (void)state;
    fresh_dir();
    const char *script = "$| = 1; my $p = fork; if ($p) { print \"$p\\n\"; waitpid($p, 0);"
                         " exit($? >> 8) } my $n = sysread(STDIN, my $b, 1); exit($n == 1 ? 7 : 1)";
    int in_fds[2];
    assert_int_equal(pipe(in_fds), 0);
    pid_t child, parent = perl_forker(script, in_fds[0], &child);
    close(in_fds[0]);
    wait_in_read(child); /* blocked without allocating: nothing will start its writer but us */

    struct snapshot_result r;
    snapshot(child, &r);
    assert_snapshot_of(&r, child);

    assert_int_equal(write(in_fds[1], "x", 1), 1); /* its read gets the byte, as without us */
    close(in_fds[1]);
    assert_int_equal(finish(parent), 7);
}

/* No preload: exit 2 and a line that says so. */
static void test_snapshot_without_preload(void **state)
{
    (void)state;
    fresh_dir();
    char stop[400];
    snprintf(stop, sizeof stop, "%s/stop", dump_dir);
    pid_t pid = fork();
    if (pid > 0)
        track(pid);
    if (pid == 0) {
        execl(FIXTURE("fixture_long_running"), "fixture_long_running", stop, (char *)NULL);
        _exit(127);
    }
    struct snapshot_result r;
    snapshot(pid, &r);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "does not have libqaudit-preload.so loaded"));
    assert_int_equal(strchr(r.err, '\n') - r.err + 1, (long)strlen(r.err)); /* one line */

    close(open(stop, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(finish(pid), 0);
}

/* QAUDIT_SIGNAL=off: a snapshot all the same, and no signal sent (SIGUSR2's default action would
 * end the fixture; it must end by itself with status 0). */
static void test_snapshot_with_signal_off(void **state)
{
    (void)state;
    fresh_dir();
    char stop[400];
    snprintf(stop, sizeof stop, "%s/stop", dump_dir);
    const char *argv[] = {FIXTURE("fixture_long_running"), stop, NULL};
    const char *env[] = {"QAUDIT_SIGNAL=off", NULL};
    pid_t pid = preloaded(track(start(argv, env)));
    struct snapshot_result r;
    snapshot(pid, &r);
    assert_snapshot_of(&r, pid);

    close(open(stop, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(finish(pid), 0);
}

/* Debian's bash with `trap ... USR2`: the program owns the dump signal; snapshot works without
 * it, and bash never sees a SIGUSR2 (its trap would leave a file behind). */
static void test_snapshot_when_the_program_claimed_the_signal(void **state)
{
    (void)state;
    fresh_dir();
    char script[1200], trapped[400], stop[400];
    snprintf(trapped, sizeof trapped, "%s/trapped", dump_dir);
    snprintf(stop, sizeof stop, "%s/stop", dump_dir);
    snprintf(script, sizeof script,
             "trap ': > %s' USR2; : > %s/ready; until [ -e %s ]; do sleep 0.02; done", trapped,
             dump_dir, stop);
    const char *argv[] = {"/bin/bash", "-c", script, NULL};
    pid_t pid = track(start(argv, NULL));
    char ready[400];
    snprintf(ready, sizeof ready, "%s/ready", dump_dir);
    for (int i = 0; i < 1200 && access(ready, F_OK) != 0; i++) /* 60 s at most */
        usleep(50000);
    assert_int_equal(access(ready, F_OK), 0); /* the trap is set */

    struct snapshot_result r;
    snapshot(pid, &r);
    assert_snapshot_of(&r, pid);

    close(open(stop, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(finish(pid), 0);
    assert_int_not_equal(access(trapped, F_OK), 0); /* no SIGUSR2 reached bash */
}

/* A perl that blocks every signal it can: the request needs none. */
static void test_snapshot_when_every_signal_is_blocked(void **state)
{
    (void)state;
    fresh_dir();
    char script[1200], stop[400], ready[400];
    snprintf(stop, sizeof stop, "%s/stop", dump_dir);
    snprintf(ready, sizeof ready, "%s/ready", dump_dir);
    snprintf(script, sizeof script,
             "use POSIX; my $s = POSIX::SigSet->new; $s->fillset; sigprocmask(SIG_BLOCK, $s);"
             " open(my $f, '>', '%s'); close $f; my @a;"
             " until (-e '%s') { push @a, 'x' x 100; shift @a if @a > 50;"
             " select(undef, undef, undef, 0.02) } exit 0",
             ready, stop);
    const char *argv[] = {"/usr/bin/perl", "-e", script, NULL};
    pid_t pid = track(start(argv, NULL));
    for (int i = 0; i < 1200 && access(ready, F_OK) != 0; i++) /* 60 s at most */
        usleep(50000);
    assert_int_equal(access(ready, F_OK), 0);

    struct snapshot_result r;
    snapshot(pid, &r);
    assert_snapshot_of(&r, pid);

    close(open(stop, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(finish(pid), 0);
}

/* The pid of a `qaudit run` stands for its program: the one child it started with the preload. */
static void test_snapshot_of_a_qaudit_run(void **state)
{
    (void)state;
    fresh_dir();
    char stop[400], out[400];
    snprintf(stop, sizeof stop, "%s/stop", dump_dir);
    snprintf(out, sizeof out, "%s/dump-%%p.json", dump_dir);
    pid_t run = track(fork());
    if (run == 0) {
        execl(QAUDIT, QAUDIT, "run", "--out", out, "--", FIXTURE("fixture_long_running"), stop,
              (char *)NULL);
        _exit(127);
    }
    /* Its child with the preload mapped (qaudit run also runs the system loader's --list). */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)run, (int)run);
    long program = 0;
    for (int i = 0; i < 6000 && program == 0; i++) { /* 60 s at most */
        FILE *f = fopen(path, "r");
        long child;
        while (f != NULL && program == 0 && fscanf(f, "%ld", &child) == 1)
            if (maps_preload((pid_t)child))
                program = child;
        if (f)
            fclose(f);
        if (program == 0)
            usleep(10000);
    }
    assert_true(program > 0);

    struct snapshot_result r;
    snapshot(run, &r);
    assert_snapshot_of(&r, (pid_t)program);
    assert_non_null(strstr(r.err, "is qaudit run"));

    close(open(stop, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(finish(run), 0);
}

/* The dump cannot be written (its directory is gone, and so is the fallback directory): exit 1
 * with the preload's own reason. */
static void test_snapshot_passes_on_the_preloads_reason(void **state)
{
    (void)state;
    fresh_dir();
    char stop[400], sub[400];
    snprintf(stop, sizeof stop, "%s/stop", dump_dir);
    snprintf(sub, sizeof sub, "%s/gone", dump_dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    const char *argv[] = {FIXTURE("fixture_long_running"), stop, NULL};
    char out[500], fallback[500];
    snprintf(out, sizeof out, "QAUDIT_OUT=%s/dump-%%p.json", sub);
    snprintf(fallback, sizeof fallback, "QAUDIT_FALLBACK_DIR=%s/none", dump_dir); /* nor there */
    const char *env[] = {out, fallback, NULL};
    pid_t pid = preloaded(track(start(argv, env)));
    assert_int_equal(rmdir(sub), 0);
    struct snapshot_result r;
    snapshot(pid, &r);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "wrote no dump"));
    assert_non_null(strstr(r.err, "no such file or directory"));

    close(open(stop, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(finish(pid), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_snapshot_of_redis, kill_leftovers),
        cmocka_unit_test_teardown(test_snapshot_of_a_forked_child, kill_leftovers),
        cmocka_unit_test_teardown(test_idle_forked_child_gets_its_writer_started, kill_leftovers),
        cmocka_unit_test_teardown(test_snapshot_without_preload, kill_leftovers),
        cmocka_unit_test_teardown(test_snapshot_with_signal_off, kill_leftovers),
        cmocka_unit_test_teardown(test_snapshot_when_the_program_claimed_the_signal,
                                  kill_leftovers),
        cmocka_unit_test_teardown(test_snapshot_when_every_signal_is_blocked, kill_leftovers),
        cmocka_unit_test_teardown(test_snapshot_of_a_qaudit_run, kill_leftovers),
        cmocka_unit_test_teardown(test_snapshot_passes_on_the_preloads_reason, kill_leftovers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
