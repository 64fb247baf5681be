/* Names of signals and errors for the interposer's lines and dumps (strerror and strsignal are
 * not async-signal-safe: a fatal signal's dump uses these), and the last ending signal that a
 * handler of the program's took, which the dump names. Context: any, signal handlers included. */
#include <errno.h>
#include <signal.h>

#include "base.h"

static _Atomic int last_signal QA_FORK_STATE;

const char *qa_signal_name(int signo)
{
    static const char *const names[] = {
        [SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",   [SIGQUIT] = "SIGQUIT",
        [SIGILL] = "SIGILL",   [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
        [SIGBUS] = "SIGBUS",   [SIGFPE] = "SIGFPE",   [SIGUSR1] = "SIGUSR1",
        [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2", [SIGPIPE] = "SIGPIPE",
        [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM", [SIGSTKFLT] = "SIGSTKFLT",
        [SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ", [SIGVTALRM] = "SIGVTALRM",
        [SIGPROF] = "SIGPROF", [SIGIO] = "SIGIO",     [SIGPWR] = "SIGPWR",
        [SIGSYS] = "SIGSYS"};
    if (signo > 0 && (size_t)signo < sizeof names / sizeof names[0] && names[signo])
        return names[signo];
    return "a signal";
}

/* strerror is not async-signal-safe; these are the errors a dump can meet. */
const char *qa_error_text(int error)
{
    switch (error) {
    case EACCES:
    case EPERM:
        return "permission denied";
    case ENOENT:
        return "no such file or directory";
    case ENOTDIR:
        return "a component of the path is not a directory";
    case ENOSPC:
    case EDQUOT:
        return "no space left";
    case EROFS:
        return "read-only file system";
    case EEXIST:
        return "every name for it is taken";
    case ENAMETOOLONG:
        return "path too long";
    case EBADF:
        return "descriptor no longer the interposer's";
    case EMFILE:
    case ENFILE:
        return "too many open files";
    default:
        return "I/O error";
    }
}

void qa_note_last_signal(int signo)
{
    atomic_store(&last_signal, signo);
}

const char *qa_last_signal(void)
{
    int signo = atomic_load(&last_signal);
    return signo ? qa_signal_name(signo) : NULL;
}
