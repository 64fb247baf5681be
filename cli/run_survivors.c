/* The processes of a qaudit run still running once its program has ended (a daemon that
 * detached): their environment holds the run's id (QAUDIT_RUN_ID), or, when the program rewrote
 * its environment for a process title (nginx, PostgreSQL), their preload's control record does.
 * A process caught inside execve has no environment to read for a moment; it is read again, not
 * passed over. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "qaudit/control.h"

#define PF_KTHREAD_FLAG 0x00200000u /* include/linux/sched.h: the task is a kernel thread */
#define STAT_FIELD_FLAGS 9          /* proc(5): fields of /proc/<pid>/stat, from 1 */
#define STAT_FIELD_START_TIME 22
#define STAT_FIELD_ENV_START 50
#define STAT_FIELD_ENV_END 51
#define REREAD_PAUSE_NS 1000000L /* 1 ms */
#define REREAD_AT_MOST 2000      /* 2 s in all: an execve is over long before */
#define IMAGES_AT_MOST 4         /* preload images looked at in one process */

/* What this file needs of /proc/<pid>/stat. */
struct process_stat {
    char state;
    unsigned long long flags, start_time, env_start, env_end;
};

static bool read_stat(const char *pid, struct process_stat *out)
{
    char path[64], stat[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, stat, sizeof stat - 1);
    close(fd);
    if (n <= 0)
        return false;
    stat[n] = '\0';
    const char *after_name = strrchr(stat, ')'); /* the name (field 2) may hold spaces */
    if (after_name == NULL || after_name[1] != ' ' || after_name[2] == '\0')
        return false;
    unsigned long long field[STAT_FIELD_ENV_END + 1] = {0};
    const char *at = after_name + 3;
    int got = 3;
    for (char *end; got < STAT_FIELD_ENV_END && *at != '\0'; at = end) {
        field[++got] = strtoull(at, &end, 10);
        if (end == at)
            return false;
    }
    if (got < STAT_FIELD_ENV_END)
        return false;
    *out =
        (struct process_stat){after_name[2], field[STAT_FIELD_FLAGS], field[STAT_FIELD_START_TIME],
                              field[STAT_FIELD_ENV_START], field[STAT_FIELD_ENV_END]};
    return true;
}

static bool gone_or_kernel(const struct process_stat *st)
{
    return st->state == 'Z' || st->state == 'X' || st->state == 'x' ||
           (st->flags & PF_KTHREAD_FLAG) != 0;
}

/* Why /proc/<pid>/environ read nothing. Between two images in execve the new memory map has no
 * environment yet (env_end is 0), and a file opened before an execve reads nothing after it:
 * both are over within the call. A process that exited (a zombie), a kernel thread and a
 * program started with an empty environment (env_start == env_end) have none to wait for. */
static bool environment_coming(const char *pid)
{
    struct process_stat st;
    if (!read_stat(pid, &st) || gone_or_kernel(&st))
        return false;
    return st.env_end == 0 || st.env_start != st.env_end;
}

/* The environment of pid into buf (at most size bytes), read again while it is coming. */
static ssize_t read_environment(const char *pid, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/environ", pid);
    const struct timespec pause = {0, REREAD_PAUSE_NS};
    for (int attempt = 0; attempt < REREAD_AT_MOST; attempt++) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return -1; /* gone, or another user's */
        ssize_t n = read(fd, buf, size);
        close(fd);
        if (n != 0 || !environment_coming(pid))
            return n;
        nanosleep(&pause, NULL);
    }
    return 0;
}

/* Whether the environment of pid holds entry (NAME=value) whole. */
static bool environ_holds(const char *pid, const char *entry)
{
    char buf[1 << 16];
    ssize_t n = read_environment(pid, buf, sizeof buf - 1);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    size_t len = strlen(entry);
    for (ssize_t at = 0; at < n; at += (ssize_t)strnlen(buf + at, (size_t)(n - at)) + 1)
        if ((size_t)(n - at) > len && memcmp(buf + at, entry, len) == 0 && buf[at + len] == '\0')
            return true;
    return false;
}

/* Whether a preload mapped in pid says, in its control record, that the process is the run's.
 * Read from its memory, as qaudit snapshot does: a process title does not reach it. */
static bool record_holds(const char *pid, const char *run_id)
{
    struct preload_image images[IMAGES_AT_MOST];
    pid_t p = (pid_t)atoi(pid);
    int count = preload_images(p, images, IMAGES_AT_MOST);
    for (int i = 0; i < count; i++) {
        struct qaudit_control c;
        if (preload_control_current(p, &images[i], &c) &&
            strncmp(c.run_id, run_id, sizeof c.run_id) == 0)
            return true;
    }
    return false;
}

/* Whether pid is one of the run's. The record is looked at only in a process started after this
 * one (none before is the run's), alive and no kernel thread: reading every process's maps
 * would cost a busy host more than the line is worth. */
static bool run_holds(const char *pid, const char *entry, const char *run_id,
                      unsigned long long run_start)
{
    if (environ_holds(pid, entry))
        return true;
    struct process_stat st;
    return read_stat(pid, &st) && !gone_or_kernel(&st) && st.start_time >= run_start &&
           record_holds(pid, run_id);
}

size_t run_survivors(const char *run_id, pid_t *out, size_t max)
{
    char entry[128];
    snprintf(entry, sizeof entry, "QAUDIT_RUN_ID=%s", run_id);
    struct process_stat self_stat;
    if (!read_stat("self", &self_stat))
        return 0;
    DIR *proc = opendir("/proc");
    if (proc == NULL)
        return 0;
    size_t count = 0;
    pid_t self = getpid();
    for (struct dirent *e; (e = readdir(proc)) != NULL;) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0 || pid == self ||
            !run_holds(e->d_name, entry, run_id, self_stat.start_time))
            continue;
        if (count < max)
            out[count] = (pid_t)pid;
        count++;
    }
    closedir(proc);
    return count;
}
