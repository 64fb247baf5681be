/* The other dumps of a qaudit run: those the processes its program started (forked children,
 * programs they exec'd) wrote under the same pattern. Each carries the run's id
 * (process.run_id, QAUDIT_RUN_ID) in its first lines, which tells them from other runs' dumps
 * left under the same names (the default pattern puts every run in the current directory). */
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define HEAD_BYTES 4096 /* process.run_id comes within the first few hundred bytes */

/* Whether the dump at path belongs to the run (its head names the run's id), and its pid
 * (process.pid, the first member of "process"; 0 when not found). */
static bool of_run(const char *path, const char *needle, pid_t *pid)
{
    char head[HEAD_BYTES + 1];
    *pid = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, head, HEAD_BYTES);
    close(fd);
    if (n <= 0)
        return false;
    head[n] = '\0';
    const char *process = strstr(head, "\"process\":{\"pid\":");
    if (process != NULL)
        *pid = (pid_t)strtol(process + strlen("\"process\":{\"pid\":"), NULL, 10);
    return strstr(head, needle) != NULL;
}

bool run_dumps_find(const char *pattern, const char *own, pid_t program, const char *run_id,
                    struct run_dumps *out)
{
    memset(out, 0, sizeof *out);
    dump_path_expand(pattern, -1, -1, out->glob, sizeof out->glob); /* every pid, sequence */
    char needle[128];
    snprintf(needle, sizeof needle, "\"run_id\":\"%s\"", run_id);
    snprintf(out->needle, sizeof out->needle, "%s", needle);
    glob_t g;
    if (glob(out->glob, 0, NULL, &g) != 0)
        return false;
    out->paths = calloc(g.gl_pathc + 1, sizeof *out->paths);
    for (size_t i = 0; out->paths != NULL && i < g.gl_pathc; i++) {
        const char *path = g.gl_pathv[i];
        if (strstr(path, ".tmp.") != NULL || strcmp(path, own) == 0)
            continue; /* a dump being written, or the program's own */
        pid_t pid;
        if (!of_run(path, needle, &pid)) {
            out->mixed = true;
            continue;
        }
        out->paths[out->count] = strdup(path);
        if (out->paths[out->count] == NULL)
            continue;
        out->count++;
        out->started += pid != program; /* else the program's own snapshot or earlier image */
    }
    globfree(&g);
    return out->started > 0;
}

void run_dumps_free(struct run_dumps *d)
{
    for (size_t i = 0; i < d->count; i++)
        free(d->paths[i]);
    free(d->paths);
    memset(d, 0, sizeof *d);
}
