/* The processes serve follows: every process whose preload has a control record this qaudit
 * reads, found by walking /proc (as `qaudit snapshot` finds one, through the record, never the
 * environment). New processes appear and ended ones disappear at the next scan, without a
 * restart; a pid whose image changed (an exec, a reused pid) is a new target. At most
 * --max-targets are followed, so memory stays bounded whatever runs on the host. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qaudit/control.h"
#include "reports/report.h"
#include "internal.h"

/* How often /proc is walked at most: each walk reads every process's maps. */
#define SCAN_EVERY_NS (200 * 1000 * 1000ll)

static struct target *target_new(pid_t pid, void *handle, const struct qaudit_control *c)
{
    struct target *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->pid = pid;
    t->start_ns = c->start_time_ns;
    t->handle = handle;
    pthread_mutex_init(&t->lock, NULL);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, t->exe, sizeof t->exe - 1);
    t->exe[n > 0 ? n : 0] = '\0';
    report_elf_file_build_id(path, t->build_id, sizeof t->build_id); /* "" when it has none */
    /* The run a process belongs to (qaudit run's QAUDIT_RUN_ID); a process started under
     * LD_PRELOAD alone has none: its image's start stands for it, so that a process restarted
     * under the same pid is another run_id and its counters another series. */
    if (c->run_id[0] != '\0')
        snprintf(t->run_id, sizeof t->run_id, "%.*s", (int)sizeof c->run_id, c->run_id);
    else
        snprintf(t->run_id, sizeof t->run_id, "start-%llu", (unsigned long long)t->start_ns);
    return t;
}

static void target_drop(struct server *s, struct target *t)
{
    if (t->refs > 0) {
        t->gone = true;
        return;
    }
    if (t->dump[0] != '\0')
        unlink(t->dump); /* the last dump a scrape read */
    s->ops->close(t->handle);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static bool usable(const struct qaudit_control *c)
{
    return c->attach_state != QAUDIT_ATTACH_DETACHED && c->attach_state != QAUDIT_ATTACH_STARTING;
}

/* The target of pid in the table, or -1. context: table lock held. */
static long index_of(const struct server *s, pid_t pid)
{
    for (size_t i = 0; i < s->target_count; i++)
        if (s->targets[i]->pid == pid && !s->targets[i]->gone)
            return (long)i;
    return -1;
}

static void remove_at(struct server *s, size_t i)
{
    struct target *t = s->targets[i];
    s->targets[i] = s->targets[--s->target_count];
    target_drop(s, t);
}

/* pid as found in /proc: kept, replaced or added. context: table lock held. */
static void visit(struct server *s, pid_t pid, bool *seen)
{
    long at = index_of(s, pid);
    struct qaudit_control c;
    if (at >= 0) {
        struct target *t = s->targets[at];
        if (s->ops->read(pid, t->handle, &c) == 0 && c.start_time_ns == t->start_ns && usable(&c)) {
            seen[at] = true;
            return;
        }
        remove_at(s, (size_t)at);
        seen[at] = seen[s->target_count]; /* the last one moved to at */
    }
    if ((long)s->target_count >= s->options.max_targets)
        return;
    void *handle = s->ops->open(pid);
    if (handle == NULL)
        return;
    struct target *t = NULL;
    if (s->ops->read(pid, handle, &c) != 0 || !usable(&c) ||
        (t = target_new(pid, handle, &c)) == NULL) {
        s->ops->close(handle);
        return;
    }
    s->targets[s->target_count] = t;
    seen[s->target_count++] = true;
}

static void scan_locked(struct server *s)
{
    DIR *proc = opendir("/proc");
    if (proc == NULL)
        return;
    bool *seen = calloc((size_t)s->options.max_targets + 1, sizeof *seen);
    if (seen == NULL) {
        closedir(proc);
        return;
    }
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
        if (pid > 0 && pid != self)
            visit(s, pid, seen);
    }
    closedir(proc);
    for (size_t i = s->target_count; i-- > 0;)
        if (!seen[i]) {
            remove_at(s, i);
            seen[i] = seen[s->target_count];
        }
    free(seen);
}

void targets_scan(struct server *s)
{
    pthread_mutex_lock(&s->table_lock);
    long long now = serve_now_ns();
    if (s->scanned_ns == 0 || now - s->scanned_ns >= SCAN_EVERY_NS) {
        scan_locked(s);
        s->scanned_ns = serve_now_ns();
    }
    pthread_mutex_unlock(&s->table_lock);
}

struct target **targets_take(struct server *s, size_t *n)
{
    targets_scan(s);
    pthread_mutex_lock(&s->table_lock);
    *n = 0;
    struct target **list = malloc((s->target_count + 1) * sizeof *list);
    for (size_t i = 0; list != NULL && i < s->target_count; i++) {
        list[(*n)++] = s->targets[i];
        s->targets[i]->refs++;
    }
    pthread_mutex_unlock(&s->table_lock);
    return list;
}

struct target *targets_find(struct server *s, pid_t pid)
{
    pthread_mutex_lock(&s->table_lock);
    s->scanned_ns = 0; /* a pid asked for by name: looked for now */
    pthread_mutex_unlock(&s->table_lock);
    targets_scan(s);
    pthread_mutex_lock(&s->table_lock);
    long at = index_of(s, pid);
    struct target *t = at >= 0 ? s->targets[at] : NULL;
    if (t != NULL)
        t->refs++;
    pthread_mutex_unlock(&s->table_lock);
    return t;
}

void targets_release(struct server *s, struct target **list, size_t n)
{
    pthread_mutex_lock(&s->table_lock);
    for (size_t i = 0; i < n; i++)
        if (--list[i]->refs == 0 && list[i]->gone)
            target_drop(s, list[i]);
    pthread_mutex_unlock(&s->table_lock);
}

void targets_free_all(struct server *s)
{
    pthread_mutex_lock(&s->table_lock);
    while (s->target_count > 0)
        remove_at(s, s->target_count - 1);
    pthread_mutex_unlock(&s->table_lock);
}
