/* Writes the allocation dump (format qaudit-alloc/1, docs/dump-format.md) without calling malloc.
 * An ordinary dump (exit, signal, interval, exec) gathers the module map first (dl_iterate_phdr
 * takes the loader lock, so no qaudit lock is held then); a final dump from _exit or a fatal
 * signal must be async-signal-safe, so it takes the last map gathered and waits for the dump lock
 * only for a bounded time, never for itself. The JSON goes to a private temporary file which
 * dump_file.c puts in place: a reader never sees half a file. A failure is reported once on
 * stderr and the process goes on.
 * Context: the writer thread and the exit and exec hooks (ordinary dumps); _exit and fatal
 * signal handlers (final dumps: async-signal-safe only). */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "qaudit/control.h"
#include "output.h"

static atomic_uint_fast64_t sequence QA_FORK_STATE;
static atomic_int error_reported QA_FORK_STATE, final_written QA_FORK_STATE;

/* Around fork: no dump may be half-way in the child, whose only thread is the one that forked
 * (a flag or lock held by another thread would be held there for ever). Taken in the order a
 * dump takes them. */
void qa_dump_before_fork(void)
{
    qa_modules_hold();
    qa_dump_lock();
}

void qa_dump_after_fork_parent(void)
{
    qa_dump_unlock();
    qa_modules_release();
}

/* The forked child: the locks the forking thread took before the fork are released; the dump
 * lock is held in the child's memory under the parent thread's tid, so it is cleared. */
void qa_dump_reset_after_fork(void)
{
    qa_dump_lock_reset_after_fork();
    qa_modules_release();
    atomic_store(&sequence, 0);
    atomic_store(&error_reported, 0);
    atomic_store(&final_written, 0);
    qa_image_started();
}

/* Every failure goes into the control record, for `qaudit snapshot` to pass on; the first one
 * also as one line on stderr. The program goes on. */
static void report_once(const char *path, const char *what, int error)
{
    char reason[QAUDIT_CONTROL_ERROR_MAX];
    struct qa_text t; /* no snprintf: a fatal signal's dump comes here (qa_dump_final) */
    qa_text_begin(&t, reason, sizeof reason);
    qa_text_add(&t, "cannot write the dump ");
    qa_text_add(&t, path);
    qa_text_add(&t, " (");
    qa_text_add(&t, what);
    qa_text_add(&t, ": ");
    qa_text_add(&t, qa_error_text(error));
    qa_text_add(&t, ")");
    qa_control_dump_failed(reason);
    if (atomic_exchange(&error_reported, 1) == 0)
        qa_log_strings(reason, "; the program goes on", NULL);
}

/* Writes one dump; the caller holds the dump lock. */
static void write_locked(enum qa_dump_reason reason, int signo,
                         const struct qa_module_list *modules)
{
    struct qa_thread *self = qa_self_if_registered();
    qa_assert(self == NULL || (self->gate & QA_GATE_BUSY)); /* nothing it allocates is counted */
    uint64_t n = atomic_fetch_add(&sequence, 1);
    static struct qa_json j QA_FORK_STATE;
    memset(&j, 0, sizeof j);
    qa_dump_render(&j, reason, signo, modules, n);
    if (j.failed) {
        report_once(qa_cfg.out_pattern, "memory for the dump", ENOMEM);
        qa_json_release(&j);
        return;
    }
    /* A detach's dump is its image's account from the attach on: named as a final one. */
    bool last = qa_dump_is_final(reason) || reason == QA_DUMP_EXEC || reason == QA_DUMP_DETACH;
    enum qa_dump_kind kind = reason == QA_DUMP_EXEC       ? QA_DUMP_KIND_EXEC
                             : last                       ? QA_DUMP_KIND_FINAL
                             : reason == QA_DUMP_INTERVAL ? QA_DUMP_KIND_INTERVAL
                                                          : QA_DUMP_KIND_SNAPSHOT;
    const char *tmp, *path;
    enum qa_dump_file_result result = qa_dump_file_put(n, kind, j.buf, j.len, &tmp, &path);
    int error = errno;
    qa_json_release(&j);
    if (result == QA_DUMP_FILE_NOT_WRITTEN) {
        report_once(tmp[0] ? tmp : qa_cfg.out_pattern,
                    error == EBADF ? "its descriptor kept being taken by the program" : "write",
                    error);
        return;
    }
    if (result == QA_DUMP_FILE_NOT_PLACED) {
        report_once(tmp, "rename", error);
        return;
    }
    qa_control_dump_written(path);
}

/* An ordinary dump: any thread, not in a signal handler. */
void qa_dump(enum qa_dump_reason reason)
{
    qa_assert_not_in_handler(); /* the loader's lock below: a handler may have interrupted it */
    if (!qa_dump_file_is_image_process())
        return; /* a vfork child, or one made by clone(): the parent's account, not its own */
    struct qa_thread *t = qa_self();
    bool was_busy = t ? qa_guard(t) : true;
    /* Gathered before the dump lock: dl_iterate_phdr takes the loader lock, which must never be
     * waited for while the dump lock is held (a fatal dump may be waiting for that). */
    const struct qa_module_list *modules = qa_modules_hold_fresh();
    qa_dump_lock();
    if (!qa_dump_is_final(reason) || atomic_exchange(&final_written, 1) == 0)
        write_locked(reason, 0, modules);
    qa_dump_unlock();
    qa_modules_release();
    if (t)
        qa_guard_restore(t, was_busy);
}

/* A dump from a signal handler that is not the image's last: the dump signal's in a forked child
 * whose writer thread has not started yet (writer.c). Async-signal-safe, as qa_dump_final below,
 * and it never waits: not written (false) when the handler interrupted the interposer itself on
 * this thread (its records are half-way through a change) or another thread holds the dump
 * lock; the caller leaves the request to the writer then. */
bool qa_dump_in_handler(enum qa_dump_reason reason)
{
    if (atomic_load(&qa_ready) != 2 || !qa_dump_file_is_image_process())
        return true; /* nothing to dump here */
    struct qa_thread *t = qa_self_if_registered();
    if (t != NULL && qa_guard(t)) {
        qa_guard_restore(t, true);
        return false;
    }
    bool locked = qa_dump_lock_try();
    if (locked) {
        write_locked(reason, 0, qa_modules_current());
        qa_dump_unlock();
    }
    if (t)
        qa_guard_restore(t, false);
    return locked;
}

/* The last dump of the process, from _exit or a fatal signal handler: async-signal-safe. It uses
 * the module map gathered last and gives up, saying why, rather than wait for itself. */
void qa_dump_final(enum qa_dump_reason reason, int signo)
{
    if (atomic_load(&qa_ready) != 2 || !qa_dump_file_is_image_process())
        return;
    if (atomic_load(&final_written)) {
        /* Another thread is writing (or wrote) the final dump: let it finish before this one
         * goes on to end the process. */
        if (qa_dump_lock_bounded())
            qa_dump_unlock();
        return;
    }
    struct qa_thread *t = qa_self_if_registered();
    bool was_busy = t ? qa_guard(t) : true;
    if (!qa_dump_lock_bounded()) {
        if (atomic_exchange(&final_written, 1) == 0)
            qa_log_strings("no final dump (", qa_dump_reason_name(reason),
                           "): ", signo ? qa_signal_name(signo) : "_exit",
                           " came while this process was writing a dump", NULL);
    } else {
        if (atomic_exchange(&final_written, 1) == 0)
            write_locked(reason, signo, qa_modules_current());
        qa_dump_unlock();
    }
    if (t)
        qa_guard_restore(t, was_busy);
}
