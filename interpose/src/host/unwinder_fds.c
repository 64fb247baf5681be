/* libunwind keeps no descriptor in the host. On its first stack, libunwind 1.6 opens a pipe and
 * keeps it for the life of the process, to test whether an address is readable by writing one
 * byte from it (read() from the pipe first, to keep it empty; write through syscall()). Two
 * descriptors on the lowest free numbers, read from, written to and closed by number later: a
 * program that reuses those numbers (a shell's `exec 3<file`, an fd closer) would have its input
 * eaten and bytes written into its files. So the interposer gives libunwind a pipe that is not
 * one: pipe2() called from libunwind's code returns two negative numbers no program uses; read()
 * of the first says "empty" (EAGAIN); syscall(SYS_write) to the second answers the question the
 * pipe was for with process_vm_readv() on the process itself, which needs no descriptor. Every
 * other call is forwarded untouched.
 * Context: libunwind's own calls, inside a stack walk on the slow path (under the guard);
 * every other caller's call is forwarded untouched. */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <libunwind.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "host.h"

enum { FAKE_READ_END = -4096, FAKE_WRITE_END = -4097 };

typedef int (*pipe2_fn)(int[2], int);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef long (*syscall_fn)(long, ...);

static pipe2_fn real_pipe2;
static read_fn real_read;
static syscall_fn real_syscall;
static uintptr_t unwinder_lo, unwinder_hi; /* libunwind's loaded extent */

static int find_extent(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t target = (uintptr_t)data, lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        lo = start < lo ? start : lo;
        hi = start + ph->p_memsz > hi ? start + ph->p_memsz : hi;
    }
    if (target < lo || target >= hi)
        return 0;
    unwinder_lo = lo;
    unwinder_hi = hi;
    return 1;
}

static void resolve(void)
{
    real_pipe2 = (pipe2_fn)dlsym(RTLD_NEXT, "pipe2");
    real_read = (read_fn)dlsym(RTLD_NEXT, "read");
    real_syscall = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
}

/* At start-up, before any stack is taken. */
void qa_unwinder_fds_init(void)
{
    resolve();
    dl_iterate_phdr(find_extent, (void *)(uintptr_t)&unw_backtrace);
}

static bool from_unwinder(const void *caller)
{
    return (uintptr_t)caller >= unwinder_lo && (uintptr_t)caller < unwinder_hi;
}

QA_EXPORT int pipe2(int fds[2], int flags)
{
    if (from_unwinder(__builtin_return_address(0))) {
        fds[0] = FAKE_READ_END;
        fds[1] = FAKE_WRITE_END;
        return 0;
    }
    if (real_pipe2 == NULL)
        resolve();
    return real_pipe2(fds, flags);
}

QA_EXPORT ssize_t read(int fd, void *buf, size_t count)
{
    if (__builtin_expect(fd == FAKE_READ_END, 0)) {
        errno = EAGAIN; /* the pipe is empty: libunwind goes on to its write */
        return -1;
    }
    if (real_read == NULL)
        resolve();
    return real_read(fd, buf, count);
}

/* Whether one byte at addr can be read: what writing it into the pipe would have said. */
static long readable(const void *addr)
{
    char byte;
    struct iovec local = {&byte, 1}, remote = {(void *)addr, 1};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1)
        return 1;
    errno = EFAULT;
    return -1;
}

/* The exported syscall's body, which exits.c's last resort calls too (not the exported name). */
long qa_syscall_entry(long number, long a0, long a1, long a2, long a3, long a4, long a5)
{
    /* The descriptor was passed as an int: only its low 32 bits are defined. */
    if (__builtin_expect(number == SYS_write && (int)a0 == FAKE_WRITE_END, 0))
        return readable((const void *)a1);
    if (number == SYS_seccomp) /* libseccomp's way: the writer's own fd table is off (seccomp.c) */
        qa_fd_table_stay_shared();
    if (real_syscall == NULL)
        resolve();
    return real_syscall(number, a0, a1, a2, a3, a4, a5);
}

/* glibc's syscall() takes up to six arguments after the number; all six are passed on. */
QA_EXPORT long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    return qa_syscall_entry(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
