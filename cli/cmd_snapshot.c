/* qaudit snapshot: asks a running preloaded process for a dump, without a signal: it writes a
 * request into the preload's control record (read and written in the process's memory,
 * preload_control.c), which the preload's writer thread serves within its poll period, and
 * passes on the dump's path, or the preload's reason when no dump could be written. A forked
 * child whose writer has not started yet (the preload starts it lazily) gets it started through
 * ptrace (ptrace_writer_start.c). Given the pid of a `qaudit run`, it acts on the program that run
 * started. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "option_parse.h"
#include "qaudit/control.h"

static const char snapshot_usage[] =
    "usage: qaudit snapshot PID [--timeout S]\n"
    "  Asks the libqaudit-preload.so loaded in PID for a dump now (a request written into its\n"
    "  control record, in the process's memory: no signal is sent), waits up to S seconds\n"
    "  (default 10) for it and prints its path. PID may be a `qaudit run`: its program is\n"
    "  asked. A forked child whose dump thread has not started yet (the preload starts it\n"
    "  at the child's first malloc 100 ms after the fork) gets it started through ptrace.\n"
    "  Exit 0: a dump was written; 1: the preload could not write it (its reason is\n"
    "  printed), none within S seconds, or the process ended first; 2: no such process, no\n"
    "  preload in it, its dump thread not running and not startable, or its memory cannot be\n"
    "  read (ptrace permission).\n";

#define MAX_IMAGES 8
#define POLL_NS (20 * 1000 * 1000)
#define LAZY_RETRY_NS (200 * 1000 * 1000)

struct target {
    pid_t pid;
    int pidfd; /* pins the process against pid reuse; -1 where the kernel lacks pidfd_open */
    struct preload_image images[MAX_IMAGES];
    int count;
};

/* A record to watch after the request: its image, its dump count before, and when its writer may
 * next be started through ptrace if it has not started yet (a forked child's, started lazily). */
struct watch {
    int image;
    uint64_t before;
    long long next_start_ns;
};

/* What an image's record says, worst (permanent) first; the transient ones may still change. */
enum verdict { NO_FILE, NO_SYMBOL, NOT_A_RECORD, OTHER_VERSION, NOT_READY, OTHER_PID, USABLE };

struct reading {
    enum verdict verdict;
    int image;
    struct qaudit_control control;
};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void pause_poll(void)
{
    nanosleep(&(struct timespec){0, POLL_NS}, NULL);
}

/* Why a read of the target's memory failed, as one line; exit status 2. */
static int read_failed(const struct target *t, const struct preload_image *img, int err)
{
    char hint[256];
    if (err == ESRCH) {
        fprintf(stderr, "qaudit snapshot: no process %d\n", (int)t->pid);
    } else if (err == EPERM || err == EACCES) {
        ptrace_permission_hint(hint, sizeof hint);
        fprintf(stderr, "qaudit snapshot: cannot read the memory of process %d: %s\n", (int)t->pid,
                hint);
    } else {
        fprintf(stderr, "qaudit snapshot: cannot read the control record of %s in process %d: %s\n",
                img ? img->path : "the preload", (int)t->pid, strerror(err));
    }
    return 2;
}

/* A `qaudit run` (its command name) stands for the one program it started with the preload. */
static pid_t program_of_run(pid_t pid)
{
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return pid;
    if (fgets(comm, sizeof comm, f) == NULL)
        comm[0] = '\0';
    fclose(f);
    pid_t children[2];
    if (strcmp(comm, "qaudit\n") != 0 || preload_children(pid, children, 2) != 1)
        return pid;
    fprintf(stderr, "qaudit snapshot: process %d is qaudit run; asking its program, process %d\n",
            (int)pid, (int)children[0]);
    return children[0];
}

static int open_target(pid_t pid, struct target *t)
{
    t->pid = pid;
    t->pidfd = -1;
    if (preload_images(pid, t->images, MAX_IMAGES) == 0)
        t->pid = pid = program_of_run(pid);
#ifdef SYS_pidfd_open
    t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (t->pidfd < 0 && errno == ESRCH)
        return read_failed(t, NULL, ESRCH);
#endif
    t->count = preload_images(pid, t->images, MAX_IMAGES);
    if (t->count < 0)
        return read_failed(t, NULL, t->count == -ENOENT ? ESRCH : -t->count);
    if (t->count == 0) {
        fprintf(stderr,
                "qaudit snapshot: process %d does not have libqaudit-preload.so loaded (start it "
                "with qaudit run, or LD_PRELOAD=.../libqaudit-preload.so)\n",
                (int)pid);
        return 2;
    }
    return 0;
}

/* Reads one image's record and judges it; a failed read is returned as an errno. */
static int judge(const struct target *t, int i, struct reading *r)
{
    const struct preload_image *img = &t->images[i];
    r->image = i;
    r->verdict = img->unreadable || img->map_end == 0 ? NO_FILE : NO_SYMBOL;
    if (img->unreadable || img->map_end == 0 || img->record == 0)
        return 0;
    int err = preload_control_read(t->pid, img, &r->control);
    if (err != 0)
        return err;
    static const char zero[sizeof r->control.magic];
    if (memcmp(r->control.magic, zero, sizeof zero) == 0)
        r->verdict = NOT_READY;
    else if (memcmp(r->control.magic, QAUDIT_CONTROL_MAGIC, sizeof QAUDIT_CONTROL_MAGIC) != 0)
        r->verdict = NOT_A_RECORD;
    else if (r->control.version != QAUDIT_CONTROL_VERSION ||
             img->record_size != sizeof(struct qaudit_control))
        r->verdict = OTHER_VERSION;
    else if (!preload_pid_matches(t->pid, r->control.pid))
        r->verdict = OTHER_PID;
    else
        r->verdict = USABLE;
    return 0;
}

/* One line on why no record can be used; exit status 2. */
static int unusable(const struct target *t, const struct reading *r, long timeout)
{
    const struct preload_image *img = &t->images[r->image];
    int pid = (int)t->pid;
    fprintf(stderr, "qaudit snapshot: ");
    switch (r->verdict) {
    case NO_FILE:
        fprintf(stderr, "cannot open %s, the preload mapped in process %d: %s\n", img->path, pid,
                strerror(img->unreadable ? img->unreadable : ENOENT));
        break;
    case NO_SYMBOL:
        fprintf(stderr,
                "the preload in process %d (%s) has no %s record: it is older than this qaudit; "
                "restart the process under the current libqaudit-preload.so\n",
                pid, img->path, QAUDIT_CONTROL_SYMBOL);
        break;
    case NOT_A_RECORD:
        fprintf(stderr, "the %s symbol of %s in process %d does not hold a control record\n",
                QAUDIT_CONTROL_SYMBOL, img->path, pid);
        break;
    case OTHER_VERSION:
        fprintf(stderr,
                "the preload in process %d (%s) has a control record of version %u (%llu "
                "bytes); this qaudit reads version %d (%zu bytes): use the qaudit built with that "
                "preload\n",
                pid, img->path, r->control.version, (unsigned long long)img->record_size,
                QAUDIT_CONTROL_VERSION, sizeof(struct qaudit_control));
        break;
    case NOT_READY:
        fprintf(stderr,
                "the preload in process %d (%s) did not start within %ld s (its control record "
                "is still empty)\n",
                pid, img->path, timeout);
        break;
    case OTHER_PID:
        fprintf(stderr,
                "the preload's control record in process %d speaks for process %d: a child made "
                "without the preload's fork handler (or a vfork child) has no dump thread\n",
                pid, (int)r->control.pid);
        break;
    case USABLE:
        break;
    }
    return 2;
}

/* A usable record whose writer thread could not start, as one line; exit status 2. */
static int no_writer(const struct target *t)
{
    fprintf(stderr,
            "qaudit snapshot: process %d cannot dump on request: its preload could not start "
            "its dump thread (it still dumps at exit)\n",
            (int)t->pid);
    return 2;
}

/* The records to ask: every usable one whose writer thread has not failed (several preloads of
 * different builds may be mapped; only one of them is wired in, but each has its thread). */
static int pick(const struct target *t, const struct reading *r, int n, struct watch *watches,
                int *watched)
{
    *watched = 0;
    bool detached = false;
    for (int i = 0; i < n; i++) {
        /* qaudit detach ended that preload's writer thread: nothing counts there now. */
        detached |= r[i].verdict == USABLE && r[i].control.attach_state == QAUDIT_ATTACH_DETACHED;
        if (r[i].verdict == USABLE && r[i].control.writer_state != QAUDIT_WRITER_FAILED &&
            r[i].control.attach_state != QAUDIT_ATTACH_DETACHED)
            watches[(*watched)++] = (struct watch){r[i].image, r[i].control.dumps_written, 0};
    }
    if (*watched == 0 && detached) {
        fprintf(stderr,
                "qaudit snapshot: process %d was detached (qaudit detach): nothing is counted "
                "there; qaudit attach %d first\n",
                (int)t->pid, (int)t->pid);
        return 2;
    }
    return *watched > 0 ? 0 : no_writer(t);
}

/* Reads every image's record until one is usable, none may become so, or the deadline passes;
 * then chooses the records to ask. */
static int choose(const struct target *t, long long deadline, long timeout, struct watch *watches,
                  int *watched)
{
    struct reading r[MAX_IMAGES];
    for (;;) {
        bool usable = false, transient = false;
        int worst = 0;
        for (int i = 0; i < t->count; i++) {
            int err = judge(t, i, &r[i]);
            if (err != 0)
                return read_failed(t, &t->images[i], err);
            usable |= r[i].verdict == USABLE;
            transient |= r[i].verdict == NOT_READY || r[i].verdict == OTHER_PID;
            if (r[i].verdict > r[worst].verdict)
                worst = i;
        }
        if (usable)
            return pick(t, r, t->count, watches, watched);
        if (!transient || now_ns() >= deadline)
            return unusable(t, &r[worst], timeout);
        pause_poll();
    }
}

/* A token no other request of this moment has: this process's pid and the clock. */
static uint64_t request_token(void)
{
    uint64_t token = ((uint64_t)getpid() << 40) ^ (uint64_t)now_ns();
    return token ? token : 1;
}

static int send_requests(const struct target *t, const struct watch *watches, int watched,
                         uint64_t token)
{
    for (int i = 0; i < watched; i++) {
        int err = preload_control_request(t->pid, &t->images[watches[i].image], token);
        if (err != 0)
            return read_failed(t, &t->images[watches[i].image], err);
    }
    return 0;
}

/* The process ended while the command waited for its dump: exit status 1. */
static int ended(const struct target *t)
{
    fprintf(stderr, "qaudit snapshot: process %d ended before a dump appeared\n", (int)t->pid);
    return 1;
}

/* A writer that has not started yet (the record says QAUDIT_WRITER_LAZY), now that the request
 * waits for it: started through ptrace. A child none of whose threads waits in a system call
 * (busy in its own code) starts it itself at its next malloc; it is tried again every
 * LAZY_RETRY_NS meanwhile. 0, or an exit status after one line. */
static int start_lazy_writer(const struct target *t, struct watch *w)
{
    if (now_ns() < w->next_start_ns)
        return 0;
    char why[512];
    int err = preload_writer_start(t->pid, &t->images[w->image], why, sizeof why);
    w->next_start_ns = now_ns() + LAZY_RETRY_NS;
    if (err == 0 || err == EBUSY)
        return 0;
    if (err == ESRCH)
        return ended(t);
    fprintf(stderr,
            "qaudit snapshot: process %d has not started its dump thread yet (a forked child "
            "starts it at its first malloc %d ms after the fork) and it cannot be started from "
            "here: %s\n",
            (int)t->pid, QAUDIT_WRITER_LAZY_MS, why);
    return 2;
}

/* What a watched record says once its writer served the request: the new dump's path (exit 0)
 * or the preload's reason for not writing it (exit 1). -1 while not served yet. */
static int served(const struct qaudit_control *c, const struct watch *w, uint64_t token, pid_t pid)
{
    if (c->dumps_written > w->before) {
        printf("%s\n", c->last_dump);
        return 0;
    }
    if (c->served != token)
        return -1;
    fprintf(stderr, "qaudit snapshot: process %d wrote no dump: %s\n", (int)pid,
            c->last_error[0] ? c->last_error : "its preload gave no reason");
    return 1;
}

/* Polls the watched records until one has served the request; prints the outcome. */
static int wait_for_dump(const struct target *t, struct watch *watches, int watched, uint64_t token,
                         long long deadline, long timeout)
{
    struct qaudit_control c;
    memset(&c, 0, sizeof c);
    for (;;) {
        for (int i = 0; i < watched; i++) {
            int err = preload_control_read(t->pid, &t->images[watches[i].image], &c);
            if (err == ESRCH)
                return ended(t);
            if (err != 0)
                return read_failed(t, &t->images[watches[i].image], err);
            int outcome = served(&c, &watches[i], token, t->pid);
            if (outcome >= 0)
                return outcome;
            if (c.writer_state == QAUDIT_WRITER_LAZY &&
                (outcome = start_lazy_writer(t, &watches[i])) != 0)
                return outcome;
        }
        if (now_ns() >= deadline)
            break;
        pause_poll();
    }
    if (c.writer_state == QAUDIT_WRITER_FAILED)
        return no_writer(t);
    fprintf(stderr,
            "qaudit snapshot: no dump of process %d within %ld s: its dump thread %s (it reads "
            "requests every %u ms; pattern %s)\n",
            (int)t->pid, timeout,
            c.writer_state == QAUDIT_WRITER_RUNNING ? "did not answer"
            : c.writer_state == QAUDIT_WRITER_LAZY
                ? "has not started (a forked child busy in its own code starts it at its next "
                  "malloc)"
                : "has not started",
            c.poll_ms, c.pattern);
    return 1;
}

static int parse_arguments(int argc, char **argv, long *timeout, pid_t *pid)
{
    const struct option_spec specs[] = {
        {"timeout", 0, OPTION_VALUE, OPTION_NUMBER, timeout, 1, NULL, "seconds to wait"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {0}};
    const struct option_table table = {"snapshot", snapshot_usage, false, specs};
    int operand = 0, parsed = option_parse(&table, argc, argv, &operand);
    if (parsed != OPTIONS_PARSED)
        return parsed;
    char *end = NULL;
    long n = operand == argc - 1 ? strtol(argv[operand], &end, 10) : 0;
    if (end == NULL || *end != '\0' || n <= 0 || n > 0x7fffffff)
        return usage_error("snapshot", "expected one PID");
    *pid = (pid_t)n;
    return -1;
}

int command_snapshot(int argc, char **argv)
{
    long timeout = 10;
    pid_t pid = 0;
    int status = parse_arguments(argc, argv, &timeout, &pid);
    if (status >= 0)
        return status;
    long long deadline = now_ns() + timeout * 1000000000ll;
    struct target t;
    struct watch watches[MAX_IMAGES];
    int watched = 0;
    uint64_t token = request_token();
    status = open_target(pid, &t);
    if (status == 0)
        status = choose(&t, deadline, timeout, watches, &watched);
    if (status == 0)
        status = send_requests(&t, watches, watched, token);
    if (status == 0)
        status = wait_for_dump(&t, watches, watched, token, deadline, timeout);
    if (t.pidfd >= 0)
        close(t.pidfd);
    return status;
}
