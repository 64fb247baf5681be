/* The dump lock: a futex word holding its holder's tid, 0 when free; waiters sleep on the word.
 * A dump writes under it, the timeline appends its points under it, fork holds it across (so no
 * dump is half-way in the child). A signal handler's dump that finds its own thread's tid there
 * (a crash inside a dump) knows not to wait. Context: any thread; qa_dump_lock_bounded in
 * signal handlers. */
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

static _Atomic int dump_owner QA_FORK_STATE; /* the holder's tid, 0 when free */

/* The calling thread's id: its record's when it has one (gettid is a page of the C library's
 * code a forked child's exit dump would fault in). */
static int my_tid(void)
{
    struct qa_thread *t = qa_tls_thread();
    return t != NULL ? t->owner_tid : (int)gettid();
}

static bool try_lock(int me)
{
    int expected = 0;
    return atomic_compare_exchange_strong(&dump_owner, &expected, me);
}

void qa_dump_lock(void)
{
    int me = my_tid();
    while (!try_lock(me)) {
        int owner = atomic_load(&dump_owner);
        if (owner != 0)
            qa_futex(&dump_owner, FUTEX_WAIT, owner, NULL);
    }
}

void qa_dump_unlock(void)
{
    atomic_store(&dump_owner, 0);
    qa_futex(&dump_owner, FUTEX_WAKE, 1, NULL);
}

/* Without waiting: false when anyone holds it. */
bool qa_dump_lock_try(void)
{
    return try_lock(my_tid());
}

/* For a dump from a signal handler: false at once if this thread holds the lock (it was
 * interrupted inside a dump), and after about five seconds if another thread keeps it. */
bool qa_dump_lock_bounded(void)
{
    int me = my_tid();
    for (int tries = 0; tries < 5000; tries++) {
        if (try_lock(me))
            return true;
        if (atomic_load(&dump_owner) == me)
            return false;
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    return false;
}

/* The forked child: the lock was taken before the fork under the parent thread's tid. */
void qa_dump_lock_reset_after_fork(void)
{
    atomic_store(&dump_owner, 0);
}
