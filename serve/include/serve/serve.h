/* qaudit serve: a daemon that finds the processes carrying libqaudit-preload.so and serves what
 * their dumps say to the engines that scrape over HTTP: Prometheus (GET /metrics), Pyroscope and
 * Parca (GET /debug/pprof/heap and /allocs, gzipped profile.proto), and their service discovery
 * (GET /targets). A scrape of a process costs it at most one dump per --min-interval, the same
 * dump `qaudit snapshot` asks for through the preload's control record. The control record is
 * read and written, and a dump thread not started yet started, by the caller
 * (cli/preload_control.c, cli/ptrace_writer_start.c) through serve_control_ops, so that this
 * part depends on reports/ only (docs/design.md, "Serve"). */
#ifndef SERVE_SERVE_H
#define SERVE_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct qaudit_control;

/* How serve reaches a process's control record (qaudit/control.h). open: a handle on the
 * preload's current record in pid (its image found once), or NULL when pid has none or may not
 * be read; read: a consistent copy of it, 0 or an errno (ESRCH: gone); request: a dump asked
 * for with token, 0 or an errno; start_writer: the dump thread of a process whose record says
 * QAUDIT_WRITER_LAZY (a prefork server's idle worker, its master) started now, as qaudit
 * snapshot starts it (through ptrace, the process stopped no longer than snapshot stops it):
 * 0, EAGAIN when it may be tried again later (no thread waiting in a system call, the process
 * stopped), another errno when it cannot be (EPERM: ptrace refused), with one line in why;
 * close: the handle released. */
struct serve_control_ops {
    void *(*open)(pid_t pid);
    int (*read)(pid_t pid, void *handle, struct qaudit_control *out);
    int (*request)(pid_t pid, void *handle, uint64_t token);
    int (*start_writer)(pid_t pid, void *handle, char *why, size_t size);
    void (*close)(void *handle);
};

struct serve_options {
    const char *listen;     /* "HOST:PORT"; port 0: any free one (printed at start) */
    const char *token_file; /* the bearer token's file, or NULL (loopback only) */
    double timeout_s;       /* how long one process's dump is waited for */
    double min_interval_s;  /* a process's figures are reused for this long */
    long max_targets;       /* processes followed at most */
    const char *state_dir;  /* where the dumps of scrapes go while read (NULL: a new one in
                               $TMPDIR) */
};

/* Runs until SIGINT or SIGTERM: 0, or 2 after one line on stderr (the address cannot be
 * bound, the token file cannot be read, a non-loopback address without a token...). */
int serve_run(const struct serve_options *options, const struct serve_control_ops *ops);

#endif
