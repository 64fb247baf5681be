/* --out as qaudit run takes it: a path pattern (%p pid, %n sequence) for the program's dump, the
 * others' named beside it; an existing directory, or a path ending in '/', for the default name
 * inside it. A directory that ends in '/' and does not exist is made, with its missing parents,
 * as `mkdir -p` would: the slash says a directory is meant. A name that does not exist and has
 * neither an extension nor a '%' ("--out d") is refused: it would make dump files named like a
 * directory (d, d.<pid>), and which was meant cannot be told. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int out_make_directories(const char *dir, const uid_t *owner, gid_t group)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return ENAMETOOLONG;
    for (char *end = path + 1;; end++) {
        if (*end != '/' && *end != '\0')
            continue;
        char kept = *end;
        *end = '\0';
        if (mkdir(path, 0777) == 0) {
            if (owner != NULL && geteuid() == 0 && chown(path, *owner, group) != 0)
                return errno;
        } else if (errno != EEXIST)
            return errno;
        *end = kept;
        if (kept == '\0' || end[1] == '\0')
            break;
    }
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

/* Whether the last part of path has an extension (a '.' after its first character). */
static bool has_extension(const char *path)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    const char *dot = strrchr(name, '.');
    return dot != NULL && dot != name && dot[1] != '\0';
}

const char *run_out_resolve(const char *out, char *inside, size_t size, const char *default_name)
{
    static char problem[PATH_MAX + 160];
    struct stat st;
    size_t length = strlen(out);
    bool slash = length > 0 && out[length - 1] == '/';
    bool exists = stat(out, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        snprintf(inside, size, "%s%s%s", out, slash ? "" : "/", default_name);
        return NULL;
    }
    if (slash) { /* one named by pid or sequence is made by nobody: the run says so */
        int error = strchr(out, '%') != NULL ? 0
                    : exists                 ? ENOTDIR
                                             : out_make_directories(out, NULL, 0);
        if (error != 0) {
            snprintf(problem, sizeof problem, "--out: cannot make the directory %s: %s", out,
                     strerror(error));
            return problem;
        }
        if (strchr(out, '%') == NULL)
            fprintf(stderr, "qaudit run: made the directory %s\n", out);
        snprintf(inside, size, "%s%s", out, default_name);
        return NULL;
    }
    if (!exists && !slash && strchr(out, '%') == NULL && !has_extension(out)) {
        snprintf(problem, sizeof problem,
                 "--out %s: no such directory; %s/ makes it, a dump's file name has an extension "
                 "(%s.json)",
                 out, out, out);
        return problem;
    }
    snprintf(inside, size, "%s", out);
    return NULL;
}
