/* A scrape of one process: the dump `qaudit snapshot` asks for (a token written into the
 * preload's control record; its writer thread dumps within its poll period), at most one per
 * --min-interval however many scrapers ask (the figures read last are served meanwhile), waited
 * for until the scrape's deadline and never longer: a stopped process gets no dump, its request
 * stays pending and the dump it writes once it runs again is taken (and removed) at the next
 * scrape, so that no scrape leaves a file behind. The preload writes a requested dump where its
 * QAUDIT_OUT says, as ".snapshot-N" beside its others; serve moves that file into its own state
 * directory at once (one file per process, replaced at each scrape, removed with the process).
 * A process whose dump thread has not started (a prefork server's idle worker) gets it started
 * through serve_control_ops.start_writer, as qaudit snapshot starts it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "qaudit/control.h"
#include "reports/report.h"
#include "internal.h"

#define POLL_NS (5 * 1000 * 1000)
/* As qaudit snapshot tries a lazy writer again (cli/cmd_snapshot.c). */
#define WRITER_RETRY_NS (200 * 1000 * 1000ll)

/* Takes t->lock until deadline_ns: false when another scrape holds it that long. */
static bool scrape_lock(struct target *t, long long deadline_ns)
{
    for (;;) {
        if (pthread_mutex_trylock(&t->lock) == 0)
            return true;
        if (serve_now_ns() >= deadline_ns)
            return false;
        nanosleep(&(struct timespec){0, POLL_NS}, NULL);
    }
}

/* from copied to to (another file system than the state directory's): 0 or an errno. */
static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int err = out < 0 ? errno : 0;
    char buf[65536];
    ssize_t n;
    while (err == 0 && (n = read(in, buf, sizeof buf)) != 0) {
        if (n < 0 || write(out, buf, (size_t)n) != n)
            err = errno ? errno : EIO;
    }
    close(in);
    if (out >= 0)
        close(out);
    return err;
}

static uint64_t counted(const struct report_count *counts, size_t n, uint64_t key)
{
    for (size_t i = 0; i < n; i++)
        if (counts[i].key == key)
            return counts[i].count;
    return 0;
}

/* The queue audit's figures: pushes, allocations at depth one, connections by peak depth. */
static void queue_figures(const struct report *r, struct figures *f)
{
    const struct report_queues *q = &r->queues;
    f->queue_audit = report_queue_audit(r);
    f->pushes = q->pushes;
    f->depth_one_allocs = counted(q->allocs_by_depth, q->allocs_by_depth_count, 1);
    for (size_t i = 0; i < q->by_peak_depth_count; i++) {
        const struct report_peak *p = &q->by_peak_depth[i];
        for (int b = 0; b < SERVE_DEPTH_BUCKETS; b++)
            if (b == SERVE_DEPTH_BUCKETS - 1 || p->peak_depth <= (1ull << b))
                f->depth_buckets[b] += p->connections;
        f->depth_sum += p->peak_depth * p->connections;
    }
    const struct report_check *check = report_check_named(r, "depth_one_no_alloc");
    enum report_check_status status = check ? report_check_status(check) : CHECK_NA;
    f->depth_one_check = status == CHECK_PASS ? 1 : status == CHECK_FAIL ? 0 : -1;
}

/* The figures of the dump at path: true, or false with t->error set. */
static bool read_figures(struct target *t, const char *path, struct figures *f)
{
    struct report r;
    memset(&r, 0, sizeof r);
    memset(f, 0, sizeof *f);
    char error[256];
    const char *paths[] = {path};
    if (report_load(paths, 1, &r, error, sizeof error) != REPORT_OK) {
        snprintf(t->error, sizeof t->error, "its dump cannot be read: %.200s", error);
        report_free(&r);
        return false;
    }
    f->allocs = r.totals.allocs;
    f->frees = r.totals.frees;
    f->bytes = r.totals.bytes_requested;
    f->live_bytes = r.totals.live_bytes;
    f->live_blocks = r.totals.live_blocks;
    f->peak_live_bytes = r.totals.peak_live_bytes;
    f->exact = !r.trust.partial;
    queue_figures(&r, f);
    report_free(&r);
    return true;
}

/* The dump the served request wrote (c->last_dump) brought into the state directory: moved when
 * it is the request's own snapshot, copied when it may be another's (written meanwhile). */
static bool take_dump(struct server *s, struct target *t, const struct qaudit_control *c)
{
    if (c->dumps_written <= t->before) {
        snprintf(t->error, sizeof t->error, "its preload wrote no dump: %.200s",
                 c->last_error[0] ? c->last_error : "no reason given");
        return false;
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%d-%llu.json", s->state_dir, (int)t->pid,
             (unsigned long long)t->start_ns);
    const char *from = c->last_dump;
    const char *base = strrchr(from, '/');
    /* Its own: the one dump written since the request, a snapshot's name, and no other tool's
     * request since (`qaudit snapshot` may have taken that dump for its own: left where it is). */
    bool own = c->dumps_written == t->before + 1 && c->request == c->served &&
               strstr(base ? base : from, ".snapshot-") != NULL;
    int err = own && rename(from, path) == 0 ? 0 : copy_file(from, path);
    if (err == 0 && own)
        unlink(from); /* after a copy across file systems */
    if (err != 0) {
        snprintf(t->error, sizeof t->error, "its dump %.160s cannot be read: %s", from,
                 strerror(err));
        return false;
    }
    struct figures f;
    snprintf(t->dump, sizeof t->dump, "%.*s", (int)sizeof t->dump - 1, path);
    if (!read_figures(t, path, &f))
        return false;
    t->fig = f;
    t->has = true;
    t->read_ns = serve_now_ns();
    t->error[0] = '\0';
    t->writer_why[0] = '\0';
    return true;
}

/* A dump asked for (the writer running, starting or not started yet: the request waits for
 * it): true, or false with t->error set. */
static bool ask(struct server *s, struct target *t, const struct qaudit_control *c)
{
    if (c->writer_state == QAUDIT_WRITER_FAILED) {
        snprintf(t->error, sizeof t->error,
                 "its preload could not start its dump thread: it dumps at exit only");
        return false;
    }
    pthread_mutex_lock(&s->table_lock);
    uint64_t token = ((uint64_t)getpid() << 40) ^ (++s->sequence << 20) ^ (uint64_t)serve_now_ns();
    pthread_mutex_unlock(&s->table_lock);
    token = token ? token : 1;
    int err = s->ops->request(t->pid, t->handle, token);
    if (err != 0) {
        snprintf(t->error, sizeof t->error, "its control record cannot be written: %s",
                 strerror(err));
        return false;
    }
    t->outstanding = token;
    t->before = c->dumps_written;
    return true;
}

/* A request waits for a dump thread that has not started (the preload starts a forked child's,
 * and a forking parent's, at an allocation: a prefork server's idle worker waiting in epoll_wait
 * makes none): started as qaudit snapshot starts it, at most every WRITER_RETRY_NS while it may
 * yet be (no thread of it waiting in a system call, the process stopped), never again for this
 * image once refused (ptrace permission): its scrapes then fail at once with that line, until
 * the process allocates and starts it itself. True, or false with t->error set. */
static bool start_writer(struct server *s, struct target *t)
{
    if (!t->writer_refused && serve_now_ns() >= t->writer_retry_ns) {
        int err = s->ops->start_writer(t->pid, t->handle, t->writer_why, sizeof t->writer_why);
        t->writer_retry_ns = serve_now_ns() + WRITER_RETRY_NS;
        if (err == 0)
            t->writer_why[0] = '\0';
        if (err == 0 || err == EAGAIN)
            return true;
        t->writer_refused = err != ESRCH;
        if (err == ESRCH) {
            snprintf(t->error, sizeof t->error, "it ended before its dump thread could start");
            return false;
        }
    }
    if (!t->writer_refused)
        return true;
    snprintf(t->error, sizeof t->error,
             "its dump thread has not started (the preload starts it at an allocation %d ms after "
             "a fork) and serve cannot start it: %.200s",
             QAUDIT_WRITER_LAZY_MS, t->writer_why);
    return false;
}

enum step { STEP_OK, STEP_FAILED, STEP_PENDING };

/* One look at t's record: its figures fresh (read at fresh_from_ns or later), failed, or its
 * dump still pending (asked for, when it was not yet). */
static enum step step(struct server *s, struct target *t, long long fresh_from_ns)
{
    if (t->has && t->outstanding == 0 && t->error[0] == '\0' && t->read_ns >= fresh_from_ns)
        return STEP_OK;
    struct qaudit_control c;
    int err = s->ops->read(t->pid, t->handle, &c);
    if (err != 0) {
        snprintf(t->error, sizeof t->error, "its control record cannot be read: %s", strerror(err));
        return STEP_FAILED;
    }
    if (t->outstanding != 0 && c.served == t->outstanding) {
        t->outstanding = 0;
        return take_dump(s, t, &c) ? STEP_OK : STEP_FAILED;
    }
    /* Another tool's request replaced this one (qaudit snapshot): asked again. */
    if (t->outstanding != 0 && c.request != t->outstanding)
        t->outstanding = 0;
    /* Another tool's request not served yet: never overwritten (its dump would be lost to it);
     * this scrape asks once it has been served. */
    if (t->outstanding == 0 && c.request == c.served && !ask(s, t, &c))
        return STEP_FAILED;
    t->poll_ms = c.poll_ms;
    if (c.writer_state == QAUDIT_WRITER_LAZY && !start_writer(s, t))
        return STEP_FAILED;
    return STEP_PENDING;
}

static void timed_out(struct target *t)
{
    if (t->writer_why[0] != '\0')
        snprintf(t->error, sizeof t->error,
                 "no dump within the scrape's time: its dump thread has not started yet: %.180s",
                 t->writer_why);
    else
        snprintf(t->error, sizeof t->error,
                 "no dump within the scrape's time: its dump thread did not answer (the process "
                 "is stopped or busy; it reads requests every %u ms)",
                 t->poll_ms);
}

/* scrape_all, figures read at fresh_from_ns or later taken as they are. */
static void refresh_all(struct server *s, struct target *const *list, bool *ok, bool *locked,
                        size_t n, long long deadline_ns, long long fresh_from_ns)
{
    bool *done = calloc(n + 1, sizeof *done);
    if (done == NULL)
        return;
    for (size_t left = n;;) {
        for (size_t i = 0; i < n; i++) {
            if (done[i] ||
                (!locked[i] && !(locked[i] = pthread_mutex_trylock(&list[i]->lock) == 0)))
                continue;
            enum step outcome = step(s, list[i], fresh_from_ns);
            if (outcome != STEP_PENDING) {
                ok[i] = outcome == STEP_OK;
                done[i] = true;
                left--;
            }
        }
        if (left == 0 || serve_now_ns() >= deadline_ns)
            break;
        nanosleep(&(struct timespec){0, POLL_NS}, NULL);
    }
    for (size_t i = 0; i < n; i++)
        if (locked[i] && !done[i])
            timed_out(list[i]);
    free(done);
}

long long scrape_fresh_from(const struct server *s)
{
    return serve_now_ns() - (long long)(s->options.min_interval_s * 1e9);
}

void scrape_all(struct server *s, struct target *const *list, bool *ok, bool *locked, size_t n,
                long long deadline_ns)
{
    refresh_all(s, list, ok, locked, n, deadline_ns, scrape_fresh_from(s));
}

bool scrape_fresh(struct server *s, struct target *t, long long deadline_ns,
                  long long fresh_from_ns, char *error, size_t size)
{
    if (!scrape_lock(t, deadline_ns)) {
        snprintf(error, size, "process %d: another scrape of it still waits for its dump",
                 (int)t->pid);
        return false;
    }
    bool ok = false, locked = true;
    refresh_all(s, &t, &ok, &locked, 1, deadline_ns, fresh_from_ns);
    if (!ok) {
        snprintf(error, size, "process %d: %s", (int)t->pid, t->error);
        pthread_mutex_unlock(&t->lock);
    }
    return ok;
}
