/* ?seconds=S on /debug/pprof/heap and /allocs: a delta profile, as Go's net/http/pprof serves
 * one (serveDeltaProfile: a profile, S seconds' wait, another, the first taken out of the
 * second). Here: a fresh dump of the process, a wait of S seconds from that dump on (the
 * connection's own thread sleeps: libmicrohttpd runs a thread per connection, so other scrapes
 * are served meanwhile), a second fresh dump, and the profile of what changed between the two
 * (reports' report_load_delta). Each dump is linked under a name of the request's own in the
 * state directory, so that scrapes meanwhile, which replace the process's dump there, take
 * nothing from it; both links are removed before the answer. A delta costs the process two
 * dumps S seconds apart. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define WAIT_STEP_NS (100 * 1000 * 1000) /* how soon a wait sees serve stopping */

/* A fresh dump of t (read at fresh_from_ns or later, by deadline_ns), linked at path: true, or
 * false with one line in error. */
static bool dump_at(struct server *s, struct target *t, long long deadline_ns,
                    long long fresh_from_ns, const char *path, long long *read_ns, char *error,
                    size_t size)
{
    if (!scrape_fresh(s, t, deadline_ns, fresh_from_ns, error, size))
        return false;
    bool ok = link(t->dump, path) == 0;
    if (!ok)
        snprintf(error, size, "cannot link %s: %s", t->dump, strerror(errno));
    *read_ns = t->read_ns;
    pthread_mutex_unlock(&t->lock);
    return ok;
}

/* Sleeps until until_ns: false when serve began to stop meanwhile. */
static bool wait_until(struct server *s, long long until_ns)
{
    for (long long now; (now = serve_now_ns()) < until_ns;) {
        if (atomic_load(&s->stopping))
            return false;
        long long step = until_ns - now < WAIT_STEP_NS ? until_ns - now : WAIT_STEP_NS;
        nanosleep(&(struct timespec){0, step}, NULL);
    }
    return !atomic_load(&s->stopping);
}

/* The process of t still the same image: else it ended (or exec'd) during the window. */
static bool still_there(struct server *s, struct target *t)
{
    struct target *now = targets_find(s, t->pid);
    if (now != NULL)
        targets_release(s, &now, 1);
    return now == t;
}

/* The two dumps S seconds apart, linked at paths[0] and paths[1]: 200, or a status with error
 * set. */
static unsigned take_dumps(struct server *s, struct target *t, unsigned seconds,
                           long long deadline_ns, char paths[2][PATH_MAX + 96], char *error,
                           size_t size)
{
    long long first_ns = 0, second_ns = 0;
    if (!dump_at(s, t, deadline_ns, serve_now_ns(), paths[0], &first_ns, error, size))
        return still_there(s, t) ? 503 : 404;
    long long end_ns = first_ns + seconds * 1000000000ll;
    if (!wait_until(s, end_ns)) {
        snprintf(error, size, "qaudit serve is stopping");
        return 503;
    }
    long long timeout_ns = (long long)(s->options.timeout_s * 1e9);
    if (!dump_at(s, t, serve_now_ns() + timeout_ns, end_ns, paths[1], &second_ns, error, size)) {
        if (still_there(s, t))
            return 503;
        snprintf(error, size, "process %d ended during the %u s of the delta", (int)t->pid,
                 seconds);
        return 404;
    }
    return 200;
}

unsigned delta_profile(struct server *s, struct target *t, bool allocs, unsigned seconds,
                       long long deadline_ns, char **body, size_t *length, char *error, size_t size)
{
    *body = NULL;
    if (atomic_fetch_add(&s->delta_waits, 1) >= SERVE_DELTA_WAITS) {
        atomic_fetch_sub(&s->delta_waits, 1);
        snprintf(error, size, "%d delta profiles wait already: ask again later", SERVE_DELTA_WAITS);
        return 503;
    }
    pthread_mutex_lock(&s->table_lock);
    uint64_t n = ++s->sequence;
    pthread_mutex_unlock(&s->table_lock);
    char paths[2][PATH_MAX + 96];
    for (int i = 0; i < 2; i++)
        snprintf(paths[i], sizeof paths[i], "%s/%d-%llu.delta-%llu-%d.json", s->state_dir,
                 (int)t->pid, (unsigned long long)t->start_ns, (unsigned long long)n, i);
    unsigned status = take_dumps(s, t, seconds, deadline_ns, paths, error, size);
    if (status == 200 &&
        (*body = pprof_render(paths[0], paths[1], allocs, length, error, size)) == NULL)
        status = 500;
    unlink(paths[0]);
    unlink(paths[1]);
    atomic_fetch_sub(&s->delta_waits, 1);
    return status;
}
