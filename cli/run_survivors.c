/* The processes of a qaudit run still running once its program has ended (a daemon that
 * detached): their environment holds the run's id (QAUDIT_RUN_ID). A process caught inside
 * execve has no environment to read for a moment; it is read again, not passed over. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define PF_KTHREAD_FLAG 0x00200000u /* include/linux/sched.h: the task is a kernel thread */
#define STAT_FIELD_FLAGS 9          /* proc(5): fields of /proc/<pid>/stat, from 1 */
#define STAT_FIELD_ENV_START 50
#define STAT_FIELD_ENV_END 51
#define REREAD_PAUSE_NS 1000000L /* 1 ms */
#define REREAD_AT_MOST 2000      /* 2 s in all: an execve is over long before */

/* Why /proc/<pid>/environ read nothing. Between two images in execve the new memory map has no
 * environment yet (env_end is 0), and a file opened before an execve reads nothing after it:
 * both are over within the call. A process that exited (a zombie), a kernel thread and a
 * program started with an empty environment (env_start == env_end) have none to wait for. */
static bool environment_coming(const char *pid)
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
    if (after_name == NULL || after_name[1] != ' ')
        return false;
    char state = after_name[2];
    if (state == 'Z' || state == 'X' || state == 'x')
        return false;
    unsigned long long field[STAT_FIELD_ENV_END + 1] = {0};
    const char *at = after_name + 3;
    int got = 3;
    for (char *end; got < STAT_FIELD_ENV_END && *at != '\0'; at = end) {
        field[++got] = strtoull(at, &end, 10);
        if (end == at)
            return false;
    }
    if (got < STAT_FIELD_ENV_END || (field[STAT_FIELD_FLAGS] & PF_KTHREAD_FLAG))
        return false;
    return field[STAT_FIELD_ENV_END] == 0 ||
           field[STAT_FIELD_ENV_START] != field[STAT_FIELD_ENV_END];
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

/* Whether the environment of pid holds entry (NAME=value) whole. A program that rewrites its
 * environment (a process title) is not found: the line that names the survivors is a help to
 * the user, not a figure. */
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

size_t run_survivors(const char *run_id, pid_t *out, size_t max)
{
    char entry[128];
    snprintf(entry, sizeof entry, "QAUDIT_RUN_ID=%s", run_id);
    DIR *proc = opendir("/proc");
    if (proc == NULL)
        return 0;
    size_t count = 0;
    pid_t self = getpid();
    for (struct dirent *e; (e = readdir(proc)) != NULL;) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0 || pid == self || !environ_holds(e->d_name, entry))
            continue;
        if (count < max)
            out[count] = (pid_t)pid;
        count++;
    }
    closedir(proc);
    return count;
}
