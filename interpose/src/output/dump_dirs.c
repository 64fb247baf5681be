/* The directories dumps go to, reachable after a chroot: before the process changes its root
 * (chroot.c), the interposer opens each (the run's dump directory and the fallback one) with
 * O_PATH and keeps the descriptor; from then on a dump path in one of them is opened, linked and
 * renamed relative to that descriptor (the *at calls), as the new root cannot name it. The
 * descriptors are on the program's table; each use borrows one, checked to be still ours
 * (private_fd.c; a duplicate on the writer thread's own table): a program that closes or
 * reuses the number loses us the directory, not its file.
 * Context: the chroot wrapper (any thread) and dumps (under the dump lock, async-signal-safe). */
#include <fcntl.h>
#include <string.h>

#include "output.h"

#define HELD_MAX 2

struct held_dir {
    char path[QA_PATH_MAX]; /* as the dump paths spell it, without a trailing slash */
    struct qa_file file;
};

static struct held_dir held[HELD_MAX];
static int held_count QA_FORK_STATE;

/* The directory part of path ("/" for a top-level name); false when it has none. */
static bool directory_of(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return false;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= size)
        return false;
    memcpy(out, path, n);
    out[n] = '\0';
    return true;
}

/* Opens the directory of path_in_it and keeps it, unless it is held already. */
void qa_dump_dirs_hold(const char *path_in_it)
{
    char dir[QA_PATH_MAX];
    if (held_count == HELD_MAX || !directory_of(path_in_it, dir, sizeof dir) || dir[0] != '/')
        return;
    for (int i = 0; i < held_count; i++)
        if (strcmp(held[i].path, dir) == 0 && qa_file_still_ours(&held[i].file))
            return;
    struct held_dir *h = &held[held_count];
    if (!qa_file_open(&h->file, dir, O_PATH | O_DIRECTORY, 0))
        return;
    memcpy(h->path, dir, strlen(dir) + 1);
    held_count++;
}

/* Where to find path: relative to a held directory (*dirfd, borrowed: give it back with
 * qa_dump_dirs_done; *name the last component), or as it is (AT_FDCWD and the path itself). */
void qa_dump_dirs_locate(const char *path, int *dirfd, const char **name)
{
    *dirfd = AT_FDCWD;
    *name = path;
    char dir[QA_PATH_MAX];
    if (held_count == 0 || !directory_of(path, dir, sizeof dir))
        return;
    for (int i = 0; i < held_count; i++)
        if (strcmp(held[i].path, dir) == 0) {
            int borrowed = qa_file_borrow(&held[i].file);
            if (borrowed < 0)
                continue;
            *dirfd = borrowed;
            *name = strrchr(path, '/') + 1;
            return;
        }
}

void qa_dump_dirs_done(int dirfd)
{
    if (dirfd != AT_FDCWD)
        qa_fd_return(dirfd);
}
