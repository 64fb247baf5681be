/* Where a process's dumps are: QAUDIT_OUT expanded the way the interposer expands it, the
 * names the interposer gives a dump when the plain one is another's, and which of them is the
 * dump of the program qaudit run started. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "reports/dump_head.h"

void dump_path_expand(const char *pattern, pid_t pid, long sequence, char *out, size_t size)
{
    size_t len = 0;
    for (const char *p = pattern; *p && len + 24 < size; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            if (pid < 0)
                out[len++] = '*';
            else
                len += (size_t)snprintf(out + len, size - len, "%d", (int)pid);
            p++;
        } else if (p[0] == '%' && p[1] == 'n') {
            if (sequence < 0)
                out[len++] = '*';
            else
                len += (size_t)snprintf(out + len, size - len, "%ld", sequence);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            out[len++] = '%';
            p++;
        } else {
            out[len++] = *p;
        }
    }
    out[len] = '\0';
}

void dump_path_directory(const char *pattern, char *out, size_t size)
{
    const char *slash = strrchr(pattern, '/');
    if (slash == NULL)
        snprintf(out, size, ".");
    else if (slash == pattern)
        snprintf(out, size, "/");
    else
        snprintf(out, size, "%.*s", (int)(slash - pattern), pattern);
}

static long long modified_ns(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
}

void dump_path_globs(const char *pattern, pid_t pid, char *plain, char *variants, size_t size)
{
    char expanded[4096];
    dump_path_expand(pattern, pid, -1, expanded, sizeof expanded);
    snprintf(plain, size, "%s", expanded);
    const char *name = strrchr(expanded, '/');
    name = name ? name + 1 : expanded;
    const char *dot = strrchr(name, '.');
    int stem = (int)(dot && dot != name ? dot - expanded : (long)strlen(expanded));
    snprintf(variants, size, "%.*s.*%s", stem, expanded, expanded + stem);
}

/* Whether path is a dump of pid in the run run_id (any run when NULL). */
static bool dump_of(const char *path, pid_t pid, const char *run_id)
{
    struct report_dump_head *h = malloc(sizeof *h);
    bool of = h != NULL && report_dump_head(path, h) && h->pid == (uint64_t)pid &&
              (run_id == NULL || strcmp(h->run_id, run_id) == 0);
    free(h);
    return of;
}

/* The newest dump of pid (and run_id) in glob pattern g, by modification time, into out. */
static long long newest_in(const char *pattern, pid_t pid, const char *run_id, long long newest,
                           char *out, size_t size)
{
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        return newest;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        long long t = modified_ns(g.gl_pathv[i]);
        if (t > newest && dump_of(g.gl_pathv[i], pid, run_id)) {
            newest = t;
            snprintf(out, size, "%s", g.gl_pathv[i]);
        }
    }
    globfree(&g);
    return newest;
}

/* The plain name is the process's last image's (the preload gives an image's dump before an
 * exec a suffix); when it holds none of the run's (that image left no dump), or the pattern has
 * %n (the plain name is a glob), the newest of the run's dumps of pid under the plain glob and
 * the names with a suffix before the extension (".<pid>", ".<k>", ".snapshot-<n>"). */
bool dump_path_program(const char *pattern, pid_t pid, const char *run_id, char *out, size_t size)
{
    char plain[4096], variants[4200];
    dump_path_globs(pattern, pid, plain, variants, sizeof plain);
    if (strpbrk(plain, "*?[") == NULL && dump_of(plain, pid, run_id)) {
        snprintf(out, size, "%s", plain);
        return true;
    }
    long long newest = newest_in(plain, pid, run_id, -1, out, size); /* %n: a glob */
    return newest_in(variants, pid, run_id, newest, out, size) >= 0;
}
