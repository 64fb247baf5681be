/* qaudit run's part in dumps a process could not write where the run's dumps go (a server that
 * dropped root, a chrooted daemon): every process of the run carries the run's id
 * (QAUDIT_RUN_ID), the preload writes such a dump into its fallback directory
 * (QAUDIT_FALLBACK_DIR, /tmp by default) as qaudit-fallback-<run id>-<name>, and once the program
 * has ended, run moves those of its run next to the others and says so. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "qaudit/control.h"

/* The run's id, exported for the program and everything it starts (kept if already set). */
void run_fallback_prepare(void)
{
    if (getenv("QAUDIT_RUN_ID") != NULL)
        return;
    unsigned char bytes[6] = {0};
    if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes) {
        unsigned v = (unsigned)getpid();
        memcpy(bytes, &v, sizeof v);
    }
    char id[16];
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(id + 2 * i, 3, "%02x", bytes[i]);
    setenv("QAUDIT_RUN_ID", id, 1);
}

static bool copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    bool ok = in >= 0 && out >= 0;
    char buf[65536];
    ssize_t n;
    while (ok && (n = read(in, buf, sizeof buf)) > 0)
        ok = write(out, buf, (size_t)n) == n;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        ok = false;
    if (!ok && out >= 0)
        unlink(to);
    return ok;
}

/* Moves from into dir under the name the preload meant it to have; false with errno set. */
static bool move_into(const char *from, const char *dir, size_t prefix)
{
    const char *base = strrchr(from, '/');
    base = (base ? base + 1 : from) + prefix;
    char to[8200];
    snprintf(to, sizeof to, "%s/%s", dir, base);
    if (access(to, F_OK) == 0) { /* never over another dump */
        errno = EEXIST;
        return false;
    }
    if (rename(from, to) == 0)
        return true;
    if (errno != EXDEV || !copy_file(from, to))
        return false;
    unlink(from); /* copied: a copy left behind would be counted twice by a glob of both */
    return true;
}

/* After the program: the run's dumps in the fallback directory, moved beside pattern's; how
 * many stay there. */
size_t run_fallback_collect(const char *pattern)
{
    const char *id = getenv("QAUDIT_RUN_ID"), *dir = getenv("QAUDIT_FALLBACK_DIR");
    if (id == NULL)
        return 0;
    char where[4096], glob_pattern[4400];
    snprintf(where, sizeof where, "%s", dir && dir[0] == '/' ? dir : "/tmp");
    snprintf(glob_pattern, sizeof glob_pattern, "%s/" QAUDIT_FALLBACK_PREFIX "%s-*.json", where,
             id);
    glob_t g;
    if (glob(glob_pattern, 0, NULL, &g) != 0)
        return 0;
    char target[4096];
    dump_path_directory(pattern, target, sizeof target);
    size_t moved = 0, left = 0, prefix = strlen(QAUDIT_FALLBACK_PREFIX) + strlen(id) + 1;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (strstr(g.gl_pathv[i], ".tmp.") != NULL)
            continue;
        if (strchr(target, '%') == NULL && move_into(g.gl_pathv[i], target, prefix))
            moved++;
        else if (++left > 0)
            fprintf(stderr, "qaudit run: a dump stays in the fallback directory: %s\n",
                    g.gl_pathv[i]);
    }
    if (moved > 0)
        fprintf(stderr,
                "qaudit run: %zu dump%s written by processes that could not write into %s (a "
                "dropped user, a chroot) moved there from %s\n",
                moved, moved == 1 ? "" : "s", target, where);
    globfree(&g);
    return left;
}
