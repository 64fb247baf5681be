/* Where a process's dumps are: QAUDIT_OUT expanded the way the interposer expands it. */
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

void dump_path_expand(const char *pattern, pid_t pid, long sequence, char *out, size_t size)
{
    size_t len = 0;
    for (const char *p = pattern; *p && len + 24 < size; p++) {
        if (p[0] == '%' && p[1] == 'p') {
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

static long long modified_ns(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
}

bool dump_path_newest(const char *pattern, pid_t pid, char *out, size_t size)
{
    char expanded[4096];
    dump_path_expand(pattern, pid, -1, expanded, sizeof expanded);
    glob_t g;
    if (glob(expanded, 0, NULL, &g) != 0)
        return false;
    long long newest = -1;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        long long t = modified_ns(g.gl_pathv[i]);
        if (strstr(g.gl_pathv[i], ".tmp.") == NULL && t > newest) {
            newest = t;
            snprintf(out, size, "%s", g.gl_pathv[i]);
        }
    }
    globfree(&g);
    return newest >= 0;
}
