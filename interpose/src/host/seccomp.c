/* Seccomp filters: a filter decides what a system call the program never made does (an error,
 * or the death of the process), and the writer thread's own descriptor table takes two such
 * calls (close_range, pidfd_open; base/fd_table.c). So it is taken only by a process that has
 * no filter: one found at start-up (/proc/self/status; a filter is inherited across fork and
 * exec and never removed), or installed later through prctl(PR_SET_SECCOMP) or syscall(SYS_seccomp)
 * (unwinder_fds.c), keeps the writer thread, and those of its children, on the program's table.
 * Context: start-up; prctl is the program's call, any thread. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "host.h"

typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);

static prctl_fn next_prctl;

/* At start-up, where dlsym's allocations are the interposer's: the next prctl, and whether the
 * process is under a filter already ("Seccomp:\t2"; unreadable counts as filtered). */
void qa_seccomp_start(void)
{
    next_prctl = (prctl_fn)dlsym(RTLD_NEXT, "prctl");
    char status[4096];
    const char *field = NULL;
    if (qa_file_slurp("/proc/self/status", status, sizeof status) > 0)
        field = strstr(status, "\nSeccomp:");
    if (field == NULL || strtol(field + strlen("\nSeccomp:"), NULL, 10) != 0)
        qa_fd_table_stay_shared();
}

QA_EXPORT int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a[4];
    for (int i = 0; i < 4; i++)
        a[i] = va_arg(ap, unsigned long);
    va_end(ap);
    if (option == PR_SET_SECCOMP)
        qa_fd_table_stay_shared();
    if (next_prctl == NULL) /* a constructor that runs before the preload's */
        next_prctl = (prctl_fn)dlsym(RTLD_NEXT, "prctl");
    if (next_prctl == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return next_prctl(option, a[0], a[1], a[2], a[3]);
}
