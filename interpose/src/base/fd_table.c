/* The writer thread's own descriptor table. A descriptor the interposer opens even for a moment
 * takes the lowest free number, and a program that opens a file at that moment gets the next one
 * (POSIX promises the lowest; fd closers, shells and daemons count on it). The writer thread opens
 * the most (/proc every 100 ms for the timeline, the dumps it is asked for), so it leaves the
 * program's table: close_range(CLOSE_RANGE_UNSHARE) gives it a table of its own holding nothing,
 * where its numbers are invisible to the program. What it needs of the program's table (stderr
 * for its lines, a dump directory held across a chroot) it borrows for one use with
 * pidfd_getfd(), the same open file, so the program's own closing of it is never held up. Not
 * in a process under a seccomp filter (host/seccomp.c): the filter may punish calls the program
 * never makes.
 * Context: the writer thread (qa_fd_table_leave, at its start); qa_fd_borrow from any thread
 * (async-signal-safe: system calls only). */
#include <errno.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"

/* This thread's pidfd for its own process, in its own table; -1 on threads that share the
 * program's table (every thread but a writer whose kernel allowed the table of its own), -2 on a
 * table of its own where pidfd_open failed. */
static __thread int own_pidfd __attribute__((tls_model("initial-exec"))) = -1;

/* A seccomp filter was seen or installed: inherited by forked children, as the filter is. */
static atomic_bool stay_shared;

void qa_fd_table_stay_shared(void)
{
    atomic_store(&stay_shared, true);
}

static long raw_syscall(long number, long a, long b, long c)
{
    return qa_real.syscall_fn ? qa_real.syscall_fn(number, a, b, c) : (errno = ENOSYS, -1);
}

/* Leaves the program's table for an empty one, then opens a pidfd of the process there. True
 * when the thread now has its own table; false (the table still shared: a seccomp filter, or an
 * old kernel that refused) changes nothing. A table left whose pidfd fails keeps the thread's
 * numbers private, and its lines on stderr are lost (qa_fd_borrow returns -1). */
bool qa_fd_table_leave(void)
{
    if (atomic_load(&stay_shared))
        return false;
    if (raw_syscall(SYS_close_range, 0, (long)~0U, CLOSE_RANGE_UNSHARE) != 0)
        return false;
    long pidfd = raw_syscall(SYS_pidfd_open, getpid(), 0, 0);
    own_pidfd = pidfd < 0 ? -2 : (int)pidfd;
    return true;
}

/* The program's descriptor program_fd for this thread: the number itself on a shared table; on
 * the writer's own table a duplicate (the same open file, O_CLOEXEC), to be closed with
 * qa_fd_return. -1 with errno when the program has no such descriptor or it cannot be had. */
int qa_fd_borrow(int program_fd)
{
    if (own_pidfd == -1)
        return program_fd;
    if (own_pidfd < 0) {
        errno = EBADF;
        return -1;
    }
    return (int)raw_syscall(SYS_pidfd_getfd, own_pidfd, program_fd, 0);
}

/* Closes a duplicate qa_fd_borrow made; errno is kept (the caller's call is what it reports). */
void qa_fd_return(int borrowed)
{
    if (own_pidfd == -1 || borrowed < 0)
        return;
    int saved = errno;
    close(borrowed);
    errno = saved;
}
