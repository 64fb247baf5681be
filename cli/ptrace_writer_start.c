/* Starting the dump writer of a forked child that has none yet: the preload starts a child's
 * writer lazily (at its first malloc QAUDIT_WRITER_LAZY_MS after the fork, qaudit/control.h), so a
 * child that blocks without allocating would never serve a request. qaudit snapshot calls the
 * preload's qaudit_writer_start there through ptrace, in a thread blocked in a system call (it
 * holds no lock of the C library's), as qaudit attach calls into a process. x86-64 only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ptrace_inject.h"
#include "qaudit/control.h"

/* Calls qaudit_writer_start in a stopped thread of p; 0, or an errno with one line in why. */
static int call_start(struct stopped_process *p, uint64_t fn, char *why, size_t size)
{
    struct stopped_thread *t = process_pick_thread(p);
    if (t == NULL || (long long)t->regs.orig_rax < 0) {
        /* Every thread was running its own code, maybe inside the C library: a call there could
         * wait for a lock the thread holds. Such a child starts its writer at its next malloc. */
        snprintf(why, size, "none of its threads was waiting in a system call");
        return EBUSY;
    }
    uint64_t result = 0;
    int err = remote_call(p, t, fn, NULL, 0, 0, &result, why, size);
    if (err != 0)
        return err;
    int started = (int)(int32_t)result;
    if (started < 0) {
        snprintf(why, size, "its preload could not start the dump thread: %s", strerror(-started));
        return -started;
    }
    return 0;
}

int preload_writer_start(pid_t pid, const struct preload_image *img, char *why, size_t size)
{
    uint64_t fn = mapped_function(pid, img, QAUDIT_WRITER_START_SYMBOL);
    if (fn == 0) {
        snprintf(why, size, "%s has no %s", img->path, QAUDIT_WRITER_START_SYMBOL);
        return ENOENT;
    }
    struct stopped_process *p = calloc(1, sizeof *p);
    if (p == NULL) {
        snprintf(why, size, "%s", strerror(ENOMEM));
        return ENOMEM;
    }
    int err = process_stop(pid, p, why, size);
    if (err == 0) {
        err = call_start(p, fn, why, size);
        process_release(p);
    } else if (err == EPERM) {
        ptrace_permission_hint(why, size);
    }
    free(p);
    return err;
}
