/* What the server tests of test_servers share (servers.c): a run natively or under `qaudit run`
 * in a directory of its own, waiting for readiness, the processes a server started, its logs
 * compared with the native run's, and the checks every run's dumps must pass. */
#ifndef QAUDIT_SERVERS_H
#define QAUDIT_SERVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define QAUDIT SERVER_DIR "/qaudit"

/* One run of a server: natively (work/n) or under `qaudit run --out OUT/d-%p.json` (work/q);
 * with default_out, `qaudit run` without --out from OUT (the default qaudit-%p.json there). */
struct server_run {
    bool qaudit;
    bool default_out;
    const char *user; /* the user its commands start as (NULL: root) */
    char dir[300];    /* its directory: files, logs, the server's own state */
    char out[320];    /* dir/out: where the dumps of the run go (mode 0700, the user's) */
};

void server_run_init(struct server_run *r, bool qaudit, const char *user);
/* path's mode set, and its owner the user's (NULL: left as it is). */
void give_to(const char *path, const char *user, mode_t mode);
/* Fails the test (scripts/deps.sh installs it) when path is not there. */
void require(const char *path, const char *package);

/* A command of the run, started in r->dir (r->out with default_out) with stdout and stderr in
 * r->dir/NAME.out and NAME.err, under qaudit run for a qaudit run. run_command waits for it
 * (limit_s at most) and returns its status; start_command returns its pid.
 */
int run_command(const struct server_run *r, const char *name, const char *const *argv, int limit_s);
pid_t start_command(const struct server_run *r, const char *name, const char *const *argv);
/* A client (curl, pgbench) natively as the run's user, output in r->dir/NAME.out. */
int run_client(const struct server_run *r, const char *name, const char *const *argv, int limit_s);
/* The same started, stdin from the file in (a FIFO the caller writes), its pid returned. */
pid_t start_client(const struct server_run *r, const char *name, const char *const *argv,
                   const char *in);
/* r->dir/NAME's contents (free it). */
char *run_file(const struct server_run *r, const char *name);

/* Readiness, polled to a bound (60 s), never slept on: a TCP listener on 127.0.0.1:port, a
 * file with a pid in it, a process's end (a child of this test: the tests are subreapers, so a
 * daemon whose parent exited is one). Each fails the test at the bound. */
void wait_listening(int port);
pid_t wait_pid_file(const char *path);
int wait_exit_of(pid_t pid); /* the status, 128 + the signal, or -1 if not a child */
/* The children of pid whose /proc cmdline starts with prefix (any when NULL), up to max, once
 * at least want of them are there. */
size_t wait_children(pid_t pid, const char *prefix, size_t want, pid_t *out, size_t max);
size_t children_of(pid_t pid, const char *prefix, pid_t *out, size_t max);
bool process_exists(pid_t pid);
/* The program a started command runs (its cmdline starting with program): the pid itself
 * natively, qaudit run's child under qaudit. */
pid_t program_of(const struct server_run *r, pid_t started, const char *program);

/* cmocka group setup and teardown: a work directory (foreign_common.c); every process the test
 * left (its descendants, daemons included) killed and reaped, then the directory removed. */
int server_setup(void **state);
int server_teardown(void **state);
/* No process the test started is left. */
void assert_nothing_left(void);

/* The native and the qaudit run's file NAME are the same text, normalised: each run's directory
 * read as RUN, runs of dots as "..", with digits every run of digits as N (times, pids, ports),
 * with sorted the lines sorted (lines of several processes or threads interleave as they
 * will). No line of the interposer's (containing "qaudit:") is in the qaudit run's file; lines
 * starting with "qaudit run: " (qaudit run's own summary on its stderr) are not the server's. */
void assert_same_log(const struct server_run *native, const struct server_run *q, const char *name,
                     bool digits, bool sorted);

/* The checks on a qaudit run's dumps (issue 19, "What must hold"):
 * - no figure in any dump is negative;
 * - `qaudit report DUMP` exits 0 for each dump alone;
 * - all merged exit 0 and count every allocation once (the report's totals.allocs is the sum
 *   over each process image's latest dump);
 * - at least min_dumps, and a final dump (end_time_ns) of each pid; the run's dumps are those
 *   in r->out and those of the documented fallback (QAUDIT_FALLBACK_DIR, the test's own), the
 *   latter only if `qaudit report` of r->out names the fallback;
 * - no dump outside r->out: none in r->dir nor in the watched directories (servers' own). */
void assert_no_negative_figure(const struct server_run *r);
void assert_each_dump_reported(const struct server_run *r);
void assert_merged_once(const struct server_run *r);
void assert_final_dumps(const struct server_run *r, const pid_t *pids, size_t npids,
                        size_t min_dumps);
void assert_no_stray_dump(const struct server_run *r, const char *const *watched);
/* The final dump of pid in the run (fails if none). Free it. */
json_t *final_dump_of(const struct server_run *r, pid_t pid);
/* Memory over time of a process under load (issue 39): of the final dumps whose process title
 * starts with title, the one with the most allocations has more than 2 points and at least a
 * quarter of what its life (in its dump) at its period gives. */
void assert_busiest_has_timeline(const struct server_run *r, const char *title);
/* A forked child's dump keeps what it inherited apart: totals.inherited.blocks and .bytes > 0. */
void assert_inherited(const struct server_run *r, pid_t pid);

/* qaudit run's stderr (r->dir/NAME) names pid among the run's processes still running (a daemon
 * that outlived its launcher, even one that wrote its process title over its environment). */
void assert_survivor_named(const struct server_run *r, const char *name, pid_t pid);

/* The report the last line of qaudit run's stderr (r->dir/NAME) gives ("qaudit run: next:
 * qaudit report ARGS"), run as the user would, once the run's processes have ended, as JSON
 * (fails the test when there is no such line or it does not exit 0); the allocations of its
 * sites whose stack passes through function; whether it holds a dump of pid. */
json_t *next_report(const struct server_run *r, const char *name);
uint64_t allocs_through(json_t *report, const char *function);
bool report_holds_pid(json_t *report, pid_t pid);

/* `qaudit snapshot PID` with no QAUDIT_* setting in its environment, taken while the server
 * runs (take_snapshot records, never fails, so that the run goes on); then: exit 0 and a new
 * dump of pid inside r->out, or in the fallback that qaudit report names (assert_snapshot_taken);
 * later, the snapshot's file still holds that dump, no later dump replaced it
 * (assert_snapshot_kept). */
struct snapshot {
    pid_t pid;
    int status;
    char err[600];  /* its stderr, cut */
    char path[700]; /* the path it printed */
    bool existed;   /* the path was a dump before the snapshot */
    long long sequence, dump_time_ns;
};
void take_snapshot(const struct server_run *r, pid_t pid, struct snapshot *s);
void assert_snapshot_taken(const struct server_run *r, const struct snapshot *s);
void assert_snapshot_kept(const struct snapshot *s);

/* HTTP through Debian's curl, natively: the bodies of urls in order, one request after
 * another (r->dir/NAME.out); then `count` requests at 8 at a time over paths, each line
 * "CODE SIZE" (r->dir/NAME-load.out, sorted by the caller's compare). */
void http_bodies(const struct server_run *r, const char *name, int port, const char *const *paths);
void http_load(const struct server_run *r, const char *name, int port, const char *const *paths,
               int count);

/* The test_servers groups: the number of failed tests. */
int servers_nginx(void);
int servers_postgres(void);
int servers_memcached(void);
int servers_node(void);

#endif
