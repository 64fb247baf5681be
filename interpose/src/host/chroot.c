/* chroot: a process that changes its root (daemons confining themselves) still writes its dumps
 * where the run's dumps go. Before the root changes, the dump directory and the fallback one are
 * opened and kept (dump_dirs.c); the call itself is the next library's.
 * Context: any thread, a program's call; nothing here allocates. */
#include <dlfcn.h>
#include <errno.h>

#include "host.h"

typedef int (*chroot_fn)(const char *);

static chroot_fn next;

/* At start-up, where dlsym's allocations are the interposer's. */
void qa_chroot_resolve(void)
{
    next = (chroot_fn)dlsym(RTLD_NEXT, "chroot");
}

QA_EXPORT int chroot(const char *path)
{
    if (next == NULL) /* a constructor that runs before the preload's */
        next = (chroot_fn)dlsym(RTLD_NEXT, "chroot");
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    if (atomic_load(&qa_ready) == 2)
        qa_dump_file_hold_directories();
    return next(path);
}
