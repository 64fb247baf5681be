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

static long long modified_ns(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec;
}

/* The newest finished dump in glob pattern g, by modification time, into out. */
static long long newest_in(const char *pattern, long long newest, char *out, size_t size)
{
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        return newest;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        long long t = modified_ns(g.gl_pathv[i]);
        if (strstr(g.gl_pathv[i], ".tmp.") == NULL && t > newest) {
            newest = t;
            snprintf(out, size, "%s", g.gl_pathv[i]);
        }
    }
    globfree(&g);
    return newest;
}

/* The preload gives a dump whose name another process took a suffix before the extension
 * (".<pid>", ".<k>"): the expanded pattern itself and those variants are searched. */
bool dump_path_newest(const char *pattern, pid_t pid, char *out, size_t size)
{
    char expanded[4096], variants[4200];
    dump_path_expand(pattern, pid, -1, expanded, sizeof expanded);
    long long newest = newest_in(expanded, -1, out, size);
    const char *name = strrchr(expanded, '/');
    name = name ? name + 1 : expanded;
    const char *dot = strrchr(name, '.');
    int stem = (int)(dot && dot != name ? dot - expanded : (long)strlen(expanded));
    snprintf(variants, sizeof variants, "%.*s.*%s", stem, expanded, expanded + stem);
    newest = newest_in(variants, newest, out, size);
    return newest >= 0;
}
