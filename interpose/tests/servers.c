/* What the server tests share: each server runs twice, natively and under `qaudit run`, each run
 * in a directory of its own; readiness is polled to a bound (a listener, a pid file, a process's
 * end), never slept on; the test is a subreaper, so daemons whose launcher exited are its
 * children and nothing it started outlives it; logs are compared modulo times and pids; and every
 * qaudit run's dumps get the same checks (issue 19, "What must hold"). */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
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

#include "foreign_common.h"
#include "foreign_run.h"
#include "harness.h"
#include "servers.h"

#define POLL_MS 10
#define BOUND_MS 60000 /* any readiness or end waited for: far beyond a loaded machine's need */

static time_t test_start; /* files older than this are not the test's */

static void pause_poll(void)
{
    nanosleep(&(struct timespec){0, POLL_MS * 1000000L}, NULL);
}

void require(const char *path, const char *package)
{
    if (access(path, X_OK) != 0)
        fail_msg("%s is missing: scripts/deps.sh installs %s", path, package);
}

void give_to(const char *path, const char *user, mode_t mode)
{
    assert_int_equal(chmod(path, mode), 0);
    struct passwd *pw = user ? getpwnam(user) : NULL;
    if (user != NULL && (pw == NULL || chown(path, pw->pw_uid, pw->pw_gid) != 0))
        fail_msg("cannot give %s to the user %s", path, user);
}

void server_run_init(struct server_run *r, bool qaudit, const char *user)
{
    *r = (struct server_run){.qaudit = qaudit, .user = user};
    give_to(work, NULL, 0755); /* servers' users read what the runs hold (html, their own dirs) */
    snprintf(r->dir, sizeof r->dir, "%s/%c", work, qaudit ? 'q' : 'n');
    assert_int_equal(mkdir(r->dir, 0755), 0);
    give_to(r->dir, user, 0755);
    /* Where the dumps go is the user's and nobody else's, as `mktemp -d` makes it. */
    snprintf(r->out, sizeof r->out, "%s/out", r->dir);
    assert_int_equal(mkdir(r->out, 0700), 0);
    give_to(r->out, user, 0700);
}

/* The environment every command of a run gets in full: the same natively and under qaudit. */
/* Where a process that cannot write where the run's dumps go may write instead (docs/
 * dump-format.md): inside the test's directory, so that nothing is left in /tmp, and searched
 * to say so when a dump is missing from the run's directory. */
static char fallback_dir[300];

static const char *const *server_env(const struct server_run *r)
{
    static char home[400], fallback[400];
    static const char *env[8];
    snprintf(home, sizeof home, "HOME=%s", r->dir);
    snprintf(fallback, sizeof fallback, "QAUDIT_FALLBACK_DIR=%s", fallback_dir);
    size_t n = 0;
    env[n++] = fallback;
    env[n++] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
    env[n++] = "LANG=C";
    env[n++] = "LC_ALL=C";
    env[n++] = "TZ=UTC";
    env[n++] = home;
    if (unwind_check_wanted())
        env[n++] = "QAUDIT_UNWIND_CHECK=1";
    env[n] = NULL;
    return env;
}

/* r->dir/NAME.SUFFIX into buf. */
static const char *run_path(const struct server_run *r, const char *name, const char *suffix,
                            char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s%s", r->dir, name, suffix);
    return buf;
}

static pid_t start_as(const struct server_run *r, const char *name, const char *const *argv,
                      bool under_qaudit, const char *in)
{
    char pattern[400], out[400], err[400];
    size_t count = 0;
    while (argv[count])
        count++;
    const char **full = calloc(count + 8, sizeof *full); /* qaudit run's options, then argv */
    size_t n = 0;
    if (under_qaudit) {
        snprintf(pattern, sizeof pattern, "%s/d-%%p.json", r->out);
        full[n++] = QAUDIT, full[n++] = "run";
        if (!r->default_out)
            full[n++] = "--out", full[n++] = pattern;
        full[n++] = "--";
    }
    for (size_t i = 0; i < count; i++)
        full[n++] = argv[i];
    full[n] = NULL;
    struct foreign_run run = {.argv = full,
                              .env = server_env(r),
                              .dir = r->default_out ? r->out : r->dir,
                              .user = r->user,
                              .in = in,
                              .out = run_path(r, name, ".out", out, sizeof out),
                              .err = run_path(r, name, ".err", err, sizeof err)};
    foreign_start(&run);
    free(full);
    assert_true(run.pid > 0);
    return run.pid;
}

static int wait_end(pid_t pid, int bound_ms);

int run_command(const struct server_run *r, const char *name, const char *const *argv, int limit_s)
{
    return wait_end(start_as(r, name, argv, r->qaudit, NULL), limit_s * 1000);
}

pid_t start_command(const struct server_run *r, const char *name, const char *const *argv)
{
    return start_as(r, name, argv, r->qaudit, NULL);
}

int run_client(const struct server_run *r, const char *name, const char *const *argv, int limit_s)
{
    return wait_end(start_as(r, name, argv, false, NULL), limit_s * 1000);
}

/* A tool of the test's natively and as root (qaudit report and snapshot, curl), in r->dir. */
static int run_as_root(const struct server_run *r, const char *name, const char *const *argv)
{
    struct server_run as_root = *r;
    as_root.user = NULL;
    return wait_exit_of(start_as(&as_root, name, argv, false, NULL));
}

pid_t start_client(const struct server_run *r, const char *name, const char *const *argv,
                   const char *in)
{
    return start_as(r, name, argv, false, in);
}

char *run_file(const struct server_run *r, const char *name)
{
    char path[600];
    return slurp(run_path(r, name, "", path, sizeof path), NULL);
}

/* ---- readiness and processes */

/* 127.0.0.1:port listening, as /proc/net/tcp shows it (state 0A): no connection is made, so the
 * server's logs and descriptors are not touched by the waiting. */
static bool listening(int port)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    char line[512], want[32];
    snprintf(want, sizeof want, "0100007F:%04X", port);
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        char local[64], remote[64], state[8];
        found = sscanf(line, "%*s %63s %63s %7s", local, remote, state) == 3 &&
                strcmp(local, want) == 0 && strcmp(state, "0A") == 0;
    }
    if (f)
        fclose(f);
    return found;
}

void wait_listening(int port)
{
    for (int waited = 0; !listening(port); waited += POLL_MS) {
        if (waited >= BOUND_MS)
            fail_msg("nothing listens on 127.0.0.1:%d after %d s", port, BOUND_MS / 1000);
        pause_poll();
    }
}

/* The process's state letter from /proc/PID/stat and its parent, or false if it is gone. */
static bool proc_stat(pid_t pid, char *state, pid_t *ppid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *paren = strrchr(text, ')'); /* the name may hold spaces and parentheses */
    int parent = 0;
    if (paren == NULL || sscanf(paren + 1, " %c %d", state, &parent) != 2)
        return false;
    *ppid = parent;
    return true;
}

bool process_exists(pid_t pid)
{
    char state;
    pid_t ppid;
    return proc_stat(pid, &state, &ppid) && state != 'Z';
}

pid_t wait_pid_file(const char *path)
{
    for (int waited = 0;; waited += POLL_MS) {
        char *text = slurp(path, NULL);
        pid_t pid = (pid_t)atoi(text);
        free(text);
        if (pid > 0 && process_exists(pid))
            return pid;
        if (waited >= BOUND_MS)
            fail_msg("no live pid in %s after %d s", path, BOUND_MS / 1000);
        pause_poll();
    }
}

static int wait_end(pid_t pid, int bound_ms)
{
    int status;
    for (int waited = 0;; waited += POLL_MS) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        /* Not (yet) this test's child: a daemon is until its launcher has exited. */
        if (got < 0 && errno == ECHILD && !process_exists(pid))
            return -1;
        if (waited >= bound_ms)
            fail_msg("process %d still runs after %d s", (int)pid, bound_ms / 1000);
        pause_poll();
    }
}

int wait_exit_of(pid_t pid)
{
    return wait_end(pid, BOUND_MS);
}

/* The start of /proc/PID/cmdline (arguments joined by spaces). */
static void cmdline_of(pid_t pid, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    if (f)
        fclose(f);
    for (size_t i = 0; i + 1 < n; i++)
        buf[i] = buf[i] ? buf[i] : ' ';
    buf[n] = '\0';
}

/* Every live process: pid and parent, up to max. */
static size_t all_processes(pid_t *pids, pid_t *parents, size_t max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t n = 0;
    while (d && (e = readdir(d)) != NULL && n < max) {
        pid_t pid = (pid_t)atoi(e->d_name);
        char state;
        if (pid > 0 && proc_stat(pid, &state, &parents[n]) && state != 'Z')
            pids[n++] = pid;
    }
    if (d)
        closedir(d);
    return n;
}

size_t children_of(pid_t pid, const char *prefix, pid_t *out, size_t max)
{
    static pid_t pids[65536], parents[65536];
    size_t all = all_processes(pids, parents, 65536), n = 0;
    for (size_t i = 0; i < all && n < max; i++) {
        char cmdline[512];
        cmdline_of(pids[i], cmdline, sizeof cmdline);
        if (parents[i] == pid && (prefix == NULL || strncmp(cmdline, prefix, strlen(prefix)) == 0))
            out[n++] = pids[i];
    }
    return n;
}

size_t wait_children(pid_t pid, const char *prefix, size_t want, pid_t *out, size_t max)
{
    for (int waited = 0;; waited += POLL_MS) {
        size_t n = children_of(pid, prefix, out, max);
        if (n >= want)
            return n;
        if (waited >= BOUND_MS)
            fail_msg("process %d has %zu children \"%s\" after %d s, not %zu", (int)pid, n,
                     prefix ? prefix : "*", BOUND_MS / 1000, want);
        pause_poll();
    }
}

pid_t program_of(const struct server_run *r, pid_t started, const char *program)
{
    pid_t child;
    if (!r->qaudit)
        return started;
    wait_children(started, program, 1, &child, 1);
    return child;
}

/* The live descendants of this test, up to max. */
static size_t descendants(pid_t *out, size_t max)
{
    static pid_t pids[65536], parents[65536];
    size_t all = all_processes(pids, parents, 65536), n = 0;
    out[n++] = getpid();
    for (size_t k = 0; k < n; k++) /* breadth first from the test itself */
        for (size_t i = 0; i < all && n < max; i++)
            if (parents[i] == out[k])
                out[n++] = pids[i];
    memmove(out, out + 1, (n - 1) * sizeof *out);
    return n - 1;
}

static void reap_all(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

int server_setup(void **state)
{
    test_start = time(NULL) - 1;
    if (make_work(state) != 0)
        return -1;
    snprintf(fallback_dir, sizeof fallback_dir, "%s/fallback", work);
    return mkdir(fallback_dir, 01777) == 0 && chmod(fallback_dir, 01777) == 0 ? 0 : -1;
}

int server_teardown(void **state)
{
    pid_t left[256];
    for (int round = 0; round < 500; round++) {
        reap_all();
        size_t n = descendants(left, 256);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++)
            kill(left[i], SIGKILL);
        pause_poll();
    }
    return remove_work(state);
}

void assert_nothing_left(void)
{
    pid_t left[16];
    reap_all();
    size_t n = descendants(left, 16);
    if (n > 0) {
        char cmdline[256];
        cmdline_of(left[0], cmdline, sizeof cmdline);
        fail_msg("%zu processes of the test are left, first %d: %s", n, (int)left[0], cmdline);
    }
}

/* ---- logs */

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* text's lines sorted, in place. */
static void sort_lines(char *text)
{
    size_t count = 0, len = strlen(text);
    for (size_t i = 0; i < len; i++)
        count += text[i] == '\n';
    char **lines = calloc(count + 1, sizeof *lines), *copy = strdup(text);
    size_t n = 0;
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    qsort(lines, n, sizeof *lines, by_text);
    char *t = text;
    for (size_t i = 0; i < n; i++)
        t = stpcpy(stpcpy(t, lines[i]), "\n");
    *t = '\0';
    free(lines);
    free(copy);
}

/* text as assert_same_log compares it (free it). */
static char *normalised(const struct server_run *r, const char *text, bool digits, bool sorted)
{
    size_t dir_len = strlen(r->dir);
    char *out = malloc(strlen(text) + 2), *o = out;
    for (const char *t = text; *t;) {
        if (strncmp(t, r->dir, dir_len) == 0) {
            o = stpcpy(o, "RUN");
            t += dir_len;
        } else if (digits && *t >= '0' && *t <= '9') {
            *o++ = 'N';
            t += strspn(t, "0123456789");
        } else if (t[0] == '.' && t[1] == '.') {
            o = stpcpy(o, "..");
            t += strspn(t, ".");
        } else {
            *o++ = *t++;
        }
    }
    *o = '\0';
    if (sorted)
        sort_lines(out);
    return out;
}

/* text without the lines that start with "qaudit run: " (qaudit run's own summary). */
static char *without_run_summary(const char *text)
{
    char *kept = malloc(strlen(text) + 1), *k = kept;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, "qaudit run: ", 12) != 0)
            k = (char *)memcpy(k, line, len) + len;
        line += len;
    }
    *k = '\0';
    return kept;
}

void assert_same_log(const struct server_run *native, const struct server_run *q, const char *name,
                     bool digits, bool sorted)
{
    char *n_text = run_file(native, name), *q_all = run_file(q, name);
    char *q_text = without_run_summary(q_all);
    const char *line = strstr(q_text, "qaudit:");
    if (line != NULL)
        fail_msg("%s under qaudit holds the interposer's line: %.300s", name, line);
    char *a = normalised(native, n_text, digits, sorted),
         *b = normalised(q, q_text, digits, sorted);
    assert_same_text(name, a, b);
    free(a), free(b), free(n_text), free(q_all), free(q_text);
}

/* ---- dumps */

static bool is_finished_dump(const char *name)
{
    size_t len = strlen(name);
    return len > 5 && strcmp(name + len - 5, ".json") == 0 && strstr(name, ".tmp.") == NULL;
}

/* The finished dumps in dir whose names start with prefix, appended to dumps and names. */
static json_t **add_dumps(const char *dir, const char *prefix, json_t **dumps, char ***names,
                          size_t *n)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    char path[700];
    while ((e = readdir(d)) != NULL) {
        if (!is_finished_dump(e->d_name) || strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        dumps = realloc(dumps, (*n + 1) * sizeof *dumps);
        *names = realloc(*names, (*n + 1) * sizeof **names);
        dumps[*n] = load(path);
        (*names)[(*n)++] = strdup(path);
    }
    closedir(d);
    return dumps;
}

/* The dumps of a qaudit run, loaded (paths in *names), count in *n: those where the run's dumps
 * go, and those the documented fallback holds (a process that could not write there, docs/
 * dump-format.md; the fallback directory is the test's own, so whatever it holds is the test's). */
static json_t **run_dumps(const struct server_run *r, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    json_t **dumps = add_dumps(r->out, "", NULL, names, n);
    return r->qaudit ? add_dumps(fallback_dir, "qaudit-fallback-", dumps, names, n) : dumps;
}

static bool in_dir(const char *path, const char *dir)
{
    size_t len = strlen(dir);
    return strncmp(path, dir, len) == 0 && path[len] == '/' && strchr(path + len + 1, '/') == NULL;
}

/* Dumps in the fallback are the run's only when `qaudit report` of the run's directory names
 * them ("qaudit run and report find and name" them, issue 19 point 5): a note naming the
 * fallback directory. */
static void assert_fallback_named(const struct server_run *r)
{
    char pattern[400], merged[600];
    snprintf(pattern, sizeof pattern, "%s/*.json", r->out);
    snprintf(merged, sizeof merged, "%s/report-named.json", work);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        fail_msg("dumps in the fallback %s, none in %s to name them", fallback_dir, r->out);
    const char **argv = calloc(g.gl_pathc + 8, sizeof *argv);
    size_t k = 0;
    argv[k++] = QAUDIT, argv[k++] = "report", argv[k++] = "--no-symbols";
    argv[k++] = "--format", argv[k++] = "json", argv[k++] = "-o", argv[k++] = merged;
    for (size_t i = 0; i < g.gl_pathc; i++)
        argv[k++] = g.gl_pathv[i];
    int status = run_as_root(r, "report", argv);
    free(argv);
    globfree(&g);
    json_t *report = json_load_file(merged, 0, NULL), *note;
    size_t i;
    bool named = false;
    json_array_foreach(json_object_get(report, "input_notes"), i, note)
    {
        named |= json_is_string(note) && strstr(json_string_value(note), fallback_dir) != NULL;
    }
    json_decref(report);
    if (status != 0 || !named)
        fail_msg("dumps of the run are in the fallback %s; qaudit report of %s (exit %d) does not "
                 "name it",
                 fallback_dir, r->out, status);
}

static void free_run_dumps(json_t **dumps, char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_decref(dumps[i]), free(names[i]);
    free(dumps);
    free(names);
}

/* The first negative number under node, its path in where; false if none. */
static bool negative_in(json_t *node, char *where, size_t size)
{
    size_t len = strlen(where), i;
    const char *key;
    json_t *v;
    if ((json_is_integer(node) && json_integer_value(node) < 0) ||
        (json_is_real(node) && json_real_value(node) < 0))
        return true;
    if (json_is_object(node))
        json_object_foreach(node, key, v)
        {
            snprintf(where + len, size - len, ".%s", key);
            if (negative_in(v, where, size))
                return true;
        }
    if (json_is_array(node))
        json_array_foreach(node, i, v)
        {
            snprintf(where + len, size - len, "[%zu]", i);
            if (negative_in(v, where, size))
                return true;
        }
    where[len] = '\0';
    return false;
}

/* A check of one dump: false with why filled when it fails. */
typedef bool (*dump_check)(const struct server_run *r, json_t *dump, const char *path, char *why,
                           size_t size);

/* check on every dump of the run; fails naming how many failed, and why the first did. */
static void assert_every_dump(const struct server_run *r, dump_check check, const char *failure)
{
    char **names;
    size_t n, bad = 0;
    json_t **dumps = run_dumps(r, &names, &n);
    char first[1200] = "", why[1000];
    for (size_t i = 0; i < n; i++)
        if (!check(r, dumps[i], names[i], why, sizeof why) && bad++ == 0)
            snprintf(first, sizeof first, "%s: %s", names[i], why);
    free_run_dumps(dumps, names, n);
    if (bad > 0)
        fail_msg("%zu of %zu dumps %s, first %s", bad, n, failure, first);
    if (n == 0)
        fail_msg("no dump in %s", r->out);
}

static bool no_negative(const struct server_run *r, json_t *dump, const char *path, char *why,
                        size_t size)
{
    (void)r, (void)path;
    why[0] = '\0';
    return !negative_in(dump, why, size);
}

void assert_no_negative_figure(const struct server_run *r)
{
    assert_every_dump(r, no_negative, "hold a negative figure");
}

/* `qaudit report ARGS...` natively, as root; its status (stderr in r->dir/report.err). */
static int report(const struct server_run *r, const char *const *args, size_t nargs)
{
    const char **argv = calloc(nargs + 2, sizeof *argv);
    argv[0] = QAUDIT;
    memcpy(argv + 1, args, nargs * sizeof *args);
    int status = run_as_root(r, "report", argv);
    free(argv);
    return status;
}

static bool reported_alone(const struct server_run *r, json_t *dump, const char *path, char *why,
                           size_t size)
{
    (void)dump;
    const char *args[] = {"report", "--no-symbols", "-o", "/dev/null", path};
    int status = report(r, args, 5);
    if (status == 0)
        return true;
    char *err = run_file(r, "report.err");
    snprintf(why, size, "exit %d: %.500s", status, err);
    free(err);
    return false;
}

void assert_each_dump_reported(const struct server_run *r)
{
    assert_every_dump(r, reported_alone, "refused by qaudit report alone");
}

static long long integer_at(json_t *root, const char *a, const char *b)
{
    return json_integer_value(json_object_get(json_object_get(root, a), b));
}

/* The sum of totals.allocs over each image's (pid, start_time_ns) latest dump. */
static long long allocs_once_each(json_t **dumps, size_t n)
{
    long long sum = 0;
    for (size_t i = 0; i < n; i++) {
        bool latest = true;
        for (size_t j = 0; j < n && latest; j++)
            latest =
                j == i ||
                integer_at(dumps[j], "process", "pid") != integer_at(dumps[i], "process", "pid") ||
                integer_at(dumps[j], "process", "start_time_ns") !=
                    integer_at(dumps[i], "process", "start_time_ns") ||
                integer_at(dumps[j], "process", "sequence") <
                    integer_at(dumps[i], "process", "sequence");
        if (latest)
            sum += integer_at(dumps[i], "totals", "allocs");
    }
    return sum;
}

void assert_merged_once(const struct server_run *r)
{
    char **names;
    size_t n;
    json_t **dumps = run_dumps(r, &names, &n);
    char merged[600]; /* outside r->dir, whose every file is searched for stray dumps */
    snprintf(merged, sizeof merged, "%s/report-%c.json", work, r->qaudit ? 'q' : 'n');
    const char **args = calloc(n + 8, sizeof *args);
    size_t k = 0;
    args[k++] = "report", args[k++] = "--no-symbols", args[k++] = "--format", args[k++] = "json";
    args[k++] = "-o", args[k++] = merged;
    for (size_t i = 0; i < n; i++)
        args[k++] = names[i];
    int status = report(r, args, k);
    free(args);
    if (status != 0) {
        char *err = run_file(r, "report.err");
        fail_msg("qaudit report of the run's %zu dumps merged: exit %d: %.500s", n, status, err);
    }
    json_t *all = json_load_file(merged, 0, NULL);
    assert_non_null(all);
    long long reported = integer_at(all, "totals", "allocs"), once = allocs_once_each(dumps, n);
    json_decref(all);
    free_run_dumps(dumps, names, n);
    if (reported != once)
        fail_msg("the merged report counts %lld allocations; the processes' latest dumps %lld",
                 reported, once);
}

/* The final dump of pid among dumps (the last image's, after any exec), or NULL. */
static json_t *final_among(json_t **dumps, size_t n, pid_t pid)
{
    json_t *found = NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *process = json_object_get(dumps[i], "process");
        const char *why = json_string_value(json_object_get(dumps[i], "reason"));
        bool last = json_object_get(process, "end_time_ns") != NULL && why != NULL &&
                    strcmp(why, "exec") != 0;
        if (last && integer_at(dumps[i], "process", "pid") == pid)
            found = dumps[i];
    }
    return found;
}

json_t *final_dump_of(const struct server_run *r, pid_t pid)
{
    char **names;
    size_t n;
    json_t **dumps = run_dumps(r, &names, &n);
    json_t *found = json_incref(final_among(dumps, n, pid));
    free_run_dumps(dumps, names, n);
    if (found == NULL)
        fail_msg("process %d left no final dump in %s nor in the fallback %s", (int)pid, r->out,
                 fallback_dir);
    return found;
}

void assert_final_dumps(const struct server_run *r, const pid_t *pids, size_t npids,
                        size_t min_dumps)
{
    char **names;
    size_t n, missing = 0;
    json_t **dumps = run_dumps(r, &names, &n);
    char list[600] = "";
    for (size_t i = 0; i < npids; i++)
        if (final_among(dumps, n, pids[i]) == NULL) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, " %d", (int)pids[i]);
            missing++;
        }
    bool fallback = false;
    for (size_t i = 0; i < n; i++)
        fallback |= in_dir(names[i], fallback_dir);
    free_run_dumps(dumps, names, n);
    if (missing > 0)
        fail_msg("%zu of %zu processes left no final dump in %s:%s", missing, npids, r->out, list);
    if (fallback)
        assert_fallback_named(r);
    if (n < min_dumps)
        fail_msg("%zu dumps in %s, at least %zu expected (one per process)", n, r->out, min_dumps);
}

/* The final dump among dumps whose process title starts with title that made the most
 * allocations, or NULL. */
static json_t *busiest_among(json_t **dumps, size_t n, const char *title)
{
    json_t *found = NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *process = json_object_get(dumps[i], "process");
        const char *first = json_string_value(json_array_get(json_object_get(process, "argv"), 0));
        if (first == NULL || strncmp(first, title, strlen(title)) != 0 ||
            json_object_get(process, "end_time_ns") == NULL)
            continue;
        if (found == NULL ||
            integer_at(dumps[i], "totals", "allocs") > integer_at(found, "totals", "allocs"))
            found = dumps[i];
    }
    return found;
}

void assert_busiest_has_timeline(const struct server_run *r, const char *title)
{
    char **names;
    size_t n;
    json_t **dumps = run_dumps(r, &names, &n);
    json_t *d = busiest_among(dumps, n, title);
    if (d == NULL)
        fail_msg("no final dump of a process titled \"%s\" in %s", title, r->out);
    json_t *process = json_object_get(d, "process");
    long long life =
        integer_at(d, "process", "dump_time_ns") - integer_at(d, "process", "start_time_ns");
    long long period = json_integer_value(json_object_get(d, "timeline_period_ns"));
    size_t points = json_array_size(json_object_get(d, "timeline"));
    long long pid = json_integer_value(json_object_get(process, "pid"));
    const char *writer =
        json_string_value(json_object_get(json_object_get(d, "timeline_writer"), "state"));
    bool enough = period > 0 && points > 2 && (long long)points * 4 >= life / period;
    char state[32];
    snprintf(state, sizeof state, "%s", writer ? writer : "absent");
    free_run_dumps(dumps, names, n);
    if (!enough)
        fail_msg("pid %lld (%s): %zu timeline points over %.2f s at a %lld ms period (writer %s)",
                 pid, title, points, (double)life / 1e9, period / 1000000, state);
}

void assert_inherited(const struct server_run *r, pid_t pid)
{
    json_t *d = final_dump_of(r, pid);
    json_t *inherited = json_object_get(json_object_get(d, "totals"), "inherited");
    long long blocks = json_integer_value(json_object_get(inherited, "blocks"));
    long long bytes = json_integer_value(json_object_get(inherited, "bytes"));
    json_decref(d);
    if (blocks <= 0 || bytes <= 0)
        fail_msg("process %d, forked: totals.inherited %s (blocks %lld, bytes %lld), not what it "
                 "inherited at the fork",
                 (int)pid, inherited ? "present" : "missing", blocks, bytes);
}

/* Whether line (up to its end) holds the number pid, not as a part of a longer one. */
static bool line_names_pid(const char *line, pid_t pid)
{
    char text[16];
    int len = snprintf(text, sizeof text, "%d", (int)pid);
    for (const char *at = line; at != NULL && *at != '\n' && *at != '\0'; at++)
        if (strncmp(at, text, (size_t)len) == 0 && (at == line || at[-1] < '0' || at[-1] > '9') &&
            (at[len] < '0' || at[len] > '9'))
            return true;
    return false;
}

void assert_survivor_named(const struct server_run *r, const char *name, pid_t pid)
{
    char *err = run_file(r, name);
    const char *line = strstr(err, "still running, pid");
    bool named = line_names_pid(line, pid);
    if (!named)
        fprintf(stderr, "%s of qaudit run, the daemon %d not named still running:\n%s\n", name,
                (int)pid, err);
    free(err);
    assert_true(named);
}

json_t *next_report(const struct server_run *r, const char *name)
{
    char *err = run_file(r, name), command[2000], out[600];
    const char *prefix = "qaudit run: next: qaudit report ", *line = NULL;
    for (const char *at = err; (at = strstr(at, prefix)) != NULL; at++)
        line = at + strlen(prefix);
    if (line == NULL)
        fail_msg("%s of qaudit run has no next: line:\n%s", name, err);
    snprintf(out, sizeof out, "%s/next-report.json", r->dir);
    snprintf(command, sizeof command, "exec %s report %.*s --format json -o %s", QAUDIT,
             (int)strcspn(line, "\n"), line, out);
    free(err);
    const char *argv[] = {"/bin/sh", "-c", command, NULL};
    int status = run_as_root(r, "next-report", argv);
    json_t *report = json_load_file(out, 0, NULL);
    if (status != 0 || report == NULL) {
        char *why = run_file(r, "next-report.err");
        fail_msg("%s: exit %d: %s", command, status, why);
    }
    return report;
}

uint64_t allocs_through(json_t *report, const char *function)
{
    uint64_t allocs = 0;
    size_t i, k, l;
    json_t *site, *frame, *location;
    json_array_foreach(json_object_get(report, "sites"), i, site)
    {
        bool through = false;
        json_array_foreach(json_object_get(site, "frames"), k, frame)
        {
            json_array_foreach(json_object_get(frame, "locations"), l, location)
            {
                const char *f = json_string_value(json_object_get(location, "function"));
                through |= f != NULL && strcmp(f, function) == 0;
            }
        }
        if (through)
            allocs += (uint64_t)json_integer_value(json_object_get(site, "allocs"));
    }
    return allocs;
}

bool report_holds_pid(json_t *report, pid_t pid)
{
    size_t i;
    json_t *dump;
    json_array_foreach(json_object_get(report, "dumps"), i, dump)
    {
        if (json_integer_value(json_object_get(dump, "pid")) == pid)
            return true;
    }
    return false;
}

/* A file that holds a dump, by its name or its first bytes. */
static bool looks_like_dump(const char *path, const char *name)
{
    if (strstr(name, ".json.tmp.") != NULL)
        return true;
    char head[256] = {0};
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f)
        fclose(f);
    head[n] = '\0';
    return strstr(head, "qaudit-alloc/") != NULL;
}

/* A dump file under dir (into found), the test's own files only (newer than its start); into
 * subdirectories when deep; never into skip. */
static bool stray_dump(const char *dir, const char *skip, bool deep, char *found, size_t size)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool any = false;
    char path[1200];
    while (d && !any && (e = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
        if (lstat(path, &st) != 0 || (skip && strcmp(path, skip) == 0))
            continue;
        if (S_ISDIR(st.st_mode) && deep)
            any = stray_dump(path, skip, deep, found, size);
        else if (S_ISREG(st.st_mode) && st.st_mtime >= test_start &&
                 looks_like_dump(path, e->d_name))
            any = snprintf(found, size, "%s", path) > 0;
    }
    if (d)
        closedir(d);
    return any;
}

void assert_no_stray_dump(const struct server_run *r, const char *const *watched)
{
    char found[1200];
    if (stray_dump(r->dir, r->out, true, found, sizeof found))
        fail_msg("a dump outside the run's directory %s: %s", r->out, found);
    for (size_t i = 0; watched && watched[i]; i++)
        if (stray_dump(watched[i], NULL, false, found, sizeof found))
            fail_msg("a dump outside the run's directory %s: %s", r->out, found);
}

/* ---- snapshots */

void take_snapshot(const struct server_run *r, pid_t pid, struct snapshot *s)
{
    char pid_text[16];
    snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
    const char *argv[] = {QAUDIT, "snapshot", pid_text, "--timeout", "20", NULL};
    char **before;
    size_t n_before;
    json_t **old = run_dumps(r, &before, &n_before);
    *s = (struct snapshot){.pid = pid};
    s->status = run_as_root(r, "snapshot", argv); /* as root: ptrace rights on every user */
    char *out = run_file(r, "snapshot.out"), *err = run_file(r, "snapshot.err");
    out[strcspn(out, "\n")] = '\0';
    snprintf(s->path, sizeof s->path, "%s", out);
    snprintf(s->err, sizeof s->err, "%s", err);
    for (size_t i = 0; i < n_before; i++)
        s->existed |= strcmp(before[i], s->path) == 0;
    free_run_dumps(old, before, n_before);
    free(out), free(err);
    json_t *d = s->status == 0 ? json_load_file(s->path, 0, NULL) : NULL;
    s->sequence = d ? integer_at(d, "process", "sequence") : -1;
    s->dump_time_ns = d ? integer_at(d, "process", "dump_time_ns") : -1;
    json_decref(d);
}

void assert_snapshot_taken(const struct server_run *r, const struct snapshot *s)
{
    if (s->status != 0)
        fail_msg("qaudit snapshot %d (no QAUDIT_* setting): exit %d: %s", (int)s->pid, s->status,
                 s->err);
    if (!in_dir(s->path, r->out) && !in_dir(s->path, fallback_dir))
        fail_msg("qaudit snapshot %d printed \"%s\", not a dump in %s (nor in the fallback)",
                 (int)s->pid, s->path, r->out);
    if (in_dir(s->path, fallback_dir))
        assert_fallback_named(r);
    if (s->existed)
        fail_msg("qaudit snapshot %d: %s was there before it", (int)s->pid, s->path);
    json_t *d = load(s->path);
    assert_int_equal(integer_at(d, "process", "pid"), s->pid);
    json_decref(d);
}

void assert_snapshot_kept(const struct snapshot *s)
{
    if (s->status != 0)
        fail_msg("qaudit snapshot %d failed (exit %d): no snapshot to keep", (int)s->pid,
                 s->status);
    if (access(s->path, F_OK) != 0)
        fail_msg("the snapshot of %d, %s, is gone", (int)s->pid, s->path);
    json_t *d = load(s->path);
    long long sequence = integer_at(d, "process", "sequence");
    long long at = integer_at(d, "process", "dump_time_ns");
    long long pid = integer_at(d, "process", "pid");
    json_decref(d);
    if (pid != s->pid || sequence != s->sequence || at != s->dump_time_ns)
        fail_msg("the snapshot of %d, %s (sequence %lld), was replaced by sequence %lld of %lld",
                 (int)s->pid, s->path, s->sequence, sequence, pid);
}

/* ---- HTTP through curl */

void http_bodies(const struct server_run *r, const char *name, int port, const char *const *paths)
{
    const char *argv[64] = {"/usr/bin/curl", "-sS", "--max-time", "30"};
    static char urls[56][128];
    size_t n = 4;
    for (size_t i = 0; paths[i] && n < 60; i++, n++) {
        snprintf(urls[i], sizeof urls[i], "http://127.0.0.1:%d%s", port, paths[i]);
        argv[n] = urls[i];
    }
    argv[n] = NULL;
    assert_int_equal(run_as_root(r, name, argv), 0);
}

void http_load(const struct server_run *r, const char *name, int port, const char *const *paths,
               int count)
{
    char config[600], load_name[200];
    snprintf(config, sizeof config, "%s/%s.curl", r->dir, name);
    FILE *f = fopen(config, "w");
    assert_non_null(f);
    size_t npaths = 0;
    while (paths[npaths])
        npaths++;
    for (int i = 0; i < count; i++)
        fprintf(f, "url = \"http://127.0.0.1:%d%s\"\noutput = \"/dev/null\"\n", port,
                paths[(size_t)i % npaths]);
    fclose(f);
    snprintf(load_name, sizeof load_name, "%s-load", name);
    const char *argv[] = {"/usr/bin/curl",
                          "-sS",
                          "--max-time",
                          "60",
                          "--parallel",
                          "--parallel-max",
                          "8",
                          "-w",
                          "%{http_code} %{size_download}\\n",
                          "--config",
                          config,
                          NULL};
    assert_int_equal(run_as_root(r, load_name, argv), 0);
}
