/* qaudit snapshot: asks a running preloaded process for a dump (its QAUDIT_SIGNAL), waits for
 * the new file to be renamed into place, and prints its path. */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char snapshot_usage[] =
    "usage: qaudit snapshot PID [--timeout S]\n"
    "  Sends the process its QAUDIT_SIGNAL (default SIGUSR2), waits up to S seconds (default 10)\n"
    "  for the new dump and prints its path. Exit 0: a dump appeared; 1: none within S seconds;\n"
    "  2: no such process, no preload in it, or its signal dumps are off.\n";

struct target {
    pid_t pid;
    char pattern[4096]; /* QAUDIT_OUT made absolute against the process's working directory */
    int signal;
};

static bool has_preload(pid_t pid)
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

/* The value of name in the process's initial environment, or NULL. */
static char *environment_value(pid_t pid, const char *name, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t name_len = strlen(name);
    char *found = NULL;
    int c;
    size_t len = 0;
    while ((c = fgetc(f)) != EOF && found == NULL) {
        if (c != '\0') {
            if (len + 1 < size)
                buf[len++] = (char)c;
            continue;
        }
        buf[len] = '\0';
        if (strncmp(buf, name, name_len) == 0 && buf[name_len] == '=') {
            memmove(buf, buf + name_len + 1, len - name_len);
            found = buf;
        }
        len = 0;
    }
    fclose(f);
    return found;
}

static int signal_named(const char *value)
{
    if (value == NULL || strcmp(value, "USR2") == 0 || strcmp(value, "SIGUSR2") == 0)
        return SIGUSR2;
    if (strcmp(value, "USR1") == 0 || strcmp(value, "SIGUSR1") == 0)
        return SIGUSR1;
    if (strcmp(value, "off") == 0)
        return 0;
    char *end;
    long n = strtol(value, &end, 10);
    return *end == '\0' && n > 0 && n < 65 ? (int)n : SIGUSR2;
}

static int find_target(pid_t pid, struct target *t)
{
    if (kill(pid, 0) != 0 && errno == ESRCH) {
        fprintf(stderr, "qaudit snapshot: no process %d\n", (int)pid);
        return 2;
    }
    if (!has_preload(pid)) {
        fprintf(stderr,
                "qaudit snapshot: process %d does not have libqaudit-preload.so loaded (start it "
                "with qaudit run, or LD_PRELOAD=.../libqaudit-preload.so)\n",
                (int)pid);
        return 2;
    }
    char value[4096], cwd[2048], link[64];
    t->pid = pid;
    t->signal = signal_named(environment_value(pid, "QAUDIT_SIGNAL", value, sizeof value));
    if (t->signal == 0) {
        fprintf(stderr, "qaudit snapshot: process %d has QAUDIT_SIGNAL=off\n", (int)pid);
        return 2;
    }
    const char *pattern = environment_value(pid, "QAUDIT_OUT", value, sizeof value);
    if (pattern == NULL || pattern[0] == '\0')
        pattern = "qaudit-%p.json";
    snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
    ssize_t n = pattern[0] == '/' ? 0 : readlink(link, cwd, sizeof cwd - 1);
    if (n < 0) {
        fprintf(stderr, "qaudit snapshot: cannot read %s: %s\n", link, strerror(errno));
        return 2;
    }
    cwd[n] = '\0';
    snprintf(t->pattern, sizeof t->pattern, "%s%s%s", cwd, n ? "/" : "", pattern);
    return 0;
}

/* A dump file as it was before the signal: a rename gives a replaced file a new inode. */
struct seen_dump {
    char *path;
    struct timespec modified;
    ino_t inode;
};

struct seen_dumps {
    struct seen_dump *items;
    size_t count;
};

static bool stat_dump(const char *path, struct seen_dump *out)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    out->modified = st.st_mtim;
    out->inode = st.st_ino;
    return true;
}

static bool seen_before(const struct seen_dumps *before, const char *path)
{
    struct seen_dump now;
    if (!stat_dump(path, &now))
        return true; /* gone again: not a dump to report */
    for (size_t i = 0; i < before->count; i++) {
        const struct seen_dump *s = &before->items[i];
        if (strcmp(s->path, path) == 0 && s->inode == now.inode &&
            s->modified.tv_sec == now.modified.tv_sec &&
            s->modified.tv_nsec == now.modified.tv_nsec)
            return true;
    }
    return false;
}

/* Calls visit for each finished dump file of the target (temporary files left out). */
static bool each_dump(const struct target *t, bool (*visit)(const char *path, void *data),
                      void *data)
{
    char expanded[4096];
    dump_path_expand(t->pattern, t->pid, -1, expanded, sizeof expanded);
    glob_t g;
    if (glob(expanded, 0, NULL, &g) != 0)
        return false;
    bool stopped = false;
    for (size_t i = 0; i < g.gl_pathc && !stopped; i++)
        if (strstr(g.gl_pathv[i], ".tmp.") == NULL)
            stopped = visit(g.gl_pathv[i], data);
    globfree(&g);
    return stopped;
}

static bool remember(const char *path, void *data)
{
    struct seen_dumps *before = data;
    struct seen_dump *grown = realloc(before->items, (before->count + 1) * sizeof *grown);
    if (grown == NULL)
        return true;
    before->items = grown;
    if (stat_dump(path, &grown[before->count]))
        grown[before->count++].path = strdup(path);
    return false;
}

struct search {
    const struct seen_dumps *before;
    char *out;
    size_t size;
};

static bool take_if_new(const char *path, void *data)
{
    struct search *s = data;
    if (seen_before(s->before, path))
        return false;
    snprintf(s->out, s->size, "%s", path);
    return true;
}

static void forget(struct seen_dumps *before)
{
    for (size_t i = 0; i < before->count; i++)
        free(before->items[i].path);
    free(before->items);
}

int command_snapshot(int argc, char **argv)
{
    static const struct option options[] = {{"timeout", required_argument, NULL, 't'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    long timeout = 10;
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (opt == 'h') {
            fputs(snapshot_usage, stdout);
            return 0;
        }
        if (opt != 't' || !parse_option_number("snapshot", "timeout", optarg, 1, &timeout)) {
            fputs(snapshot_usage, stderr);
            return 2;
        }
    }
    char *end = NULL;
    long pid = optind == argc - 1 ? strtol(argv[optind], &end, 10) : 0;
    if (end == NULL || *end != '\0' || pid <= 0) {
        fprintf(stderr, "qaudit snapshot: expected one PID\n%s", snapshot_usage);
        return 2;
    }
    struct target t;
    int status = find_target((pid_t)pid, &t);
    if (status != 0)
        return status;
    struct seen_dumps before = {0};
    each_dump(&t, remember, &before);
    if (kill(t.pid, t.signal) != 0) {
        fprintf(stderr, "qaudit snapshot: cannot signal %ld: %s\n", pid, strerror(errno));
        forget(&before);
        return 2;
    }
    char path[4096];
    status = 1;
    for (long waited_ms = 0; waited_ms < timeout * 1000; waited_ms += 20) {
        struct search search = {&before, path, sizeof path};
        if (each_dump(&t, take_if_new, &search)) {
            printf("%s\n", path);
            status = 0;
            break;
        }
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    forget(&before);
    if (status != 0)
        fprintf(stderr, "qaudit snapshot: no new dump of process %ld within %ld s (pattern %s)\n",
                pid, timeout, t.pattern);
    return status;
}
