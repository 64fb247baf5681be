/* File descriptors the interposer opens for itself (the dump file, /proc files, ELF symbol
 * tables). A descriptor number belongs to the whole process: a program that closes or dup2()s
 * over every number it does not know (daemons, fd closers) can take ours and put its own file
 * there. So each descriptor is used only while fstat() still shows the file we opened, checked
 * before every read, write and close; once it is not ours, we stop touching that number.
 * Context: any thread, signal handlers included (open, fstat, read, write, close only); never
 * the fast path. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

/* Opens path for the interposer. The number open() returns may be taken by the program before
 * fstat() looks at it (a closer thread, then another open), so the descriptor is checked to be
 * the very file at path; a number that is not ours is neither used nor closed. */
bool qa_file_open(struct qa_file *f, const char *path, int flags, mode_t mode)
{
    return qa_file_openat(f, AT_FDCWD, path, flags, mode);
}

/* The same, name relative to the directory dirfd (dump_dirs.c holds one after a chroot). */
bool qa_file_openat(struct qa_file *f, int dirfd, const char *name, int flags, mode_t mode)
{
    f->fd = openat(dirfd, name, flags | O_CLOEXEC, mode);
    if (f->fd < 0)
        return false;
    struct stat by_fd, by_path;
    int follow = (flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0;
    bool same = fstat(f->fd, &by_fd) == 0 && fstatat(dirfd, name, &by_path, follow) == 0 &&
                by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
    if (!same) {
        f->fd = -1;
        errno = EBADF;
        return false;
    }
    f->dev = by_fd.st_dev;
    f->ino = by_fd.st_ino;
    return true;
}

bool qa_file_still_ours(const struct qa_file *f)
{
    struct stat st;
    return f->fd >= 0 && fstat(f->fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

/* f's descriptor as this thread can use it: the number on the program's table, a duplicate on the
 * writer's own (fd_table.c); -1 unless it is still the file f opened. Given back with
 * qa_fd_return. For descriptors held across calls by whichever thread opened them (a dump
 * directory held across a chroot). */
int qa_file_borrow(const struct qa_file *f)
{
    if (f->fd < 0)
        return -1;
    int fd = qa_fd_borrow(f->fd);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino)
        return fd;
    qa_fd_return(fd);
    return -1;
}

/* A write that stops, with EBADF, as soon as the number is no longer ours; SIGPIPE blocked. */
bool qa_file_write_all(struct qa_file *f, const void *data, size_t size)
{
    struct qa_sigpipe guard;
    qa_sigpipe_block(&guard);
    const char *p = data;
    bool ok = true;
    while (ok && size > 0) {
        if (!qa_file_still_ours(f)) {
            f->fd = -1;
            errno = EBADF;
            ok = false;
            break;
        }
        ssize_t n = write(f->fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ok = false;
            break;
        }
        p += n;
        size -= (size_t)n;
    }
    qa_sigpipe_restore(&guard, !ok && errno == EPIPE);
    return ok;
}

ssize_t qa_file_read(struct qa_file *f, void *buf, size_t size)
{
    if (!qa_file_still_ours(f)) {
        f->fd = -1;
        errno = EBADF;
        return -1;
    }
    ssize_t n;
    do
        n = qa_real.read_fn(f->fd, buf, size);
    while (n < 0 && errno == EINTR);
    return n;
}

/* Closes the descriptor if it is still ours; a number the program has taken is left to it. */
int qa_file_close(struct qa_file *f)
{
    int result = 0;
    if (qa_file_still_ours(f))
        result = close(f->fd);
    else if (f->fd >= 0) {
        errno = EBADF;
        result = -1;
    }
    f->fd = -1;
    return result;
}

/* The whole of a small file (under /proc) into buf, NUL-terminated; its length, or -1. */
ssize_t qa_file_slurp(const char *path, char *buf, size_t size)
{
    struct qa_file f;
    if (size == 0 || !qa_file_open(&f, path, O_RDONLY, 0))
        return -1;
    size_t len = 0;
    ssize_t n = 0;
    while (len + 1 < size && (n = qa_file_read(&f, buf + len, size - 1 - len)) > 0)
        len += (size_t)n;
    qa_file_close(&f);
    buf[len] = '\0';
    return n < 0 ? -1 : (ssize_t)len;
}
