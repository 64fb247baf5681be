/* Signals, without the program ever seeing the interposer's hand in them.
 * - The dump signal (QAUDIT_SIGNAL): where the program leaves it at its default or ignores it,
 *   the interposer's handler asks the writer thread for a dump. Once the program installs a
 *   handler of its own, the signal is the program's: the interposer steps aside (and says so on
 *   stderr only when QAUDIT_SIGNAL was set explicitly: `qaudit snapshot` needs no signal).
 * - Signals that end the process (SIGSEGV, SIGABRT, SIGTERM, ...): where the program leaves one
 *   at its default, a handler writes the final dump, puts the default back and raises the signal
 *   again, so the exit status and core dump are what they would have been. Where the program
 *   installs a handler of its own, the interposer installs a trampoline with the program's mask
 *   and flags that calls it; SA_RESETHAND (SA_ONESHOT) is emulated by the trampoline, which puts
 *   the final-dump handler in place of the kernel's reset to SIG_DFL, so that a handler that
 *   re-raises (node's SIGTERM and SIGINT) still leaves the final dump with the signal named.
 * - sigaction, signal, bsd_signal and sysv_signal are interposed so that the program reads back
 *   exactly the disposition it set (SIG_DFL, not the interposer's handler), and so that a program
 *   which puts a fatal signal back to SIG_DFL (as crash handlers do before re-raising) still gets
 *   its final dump.
 * Context: handlers run on any thread at any moment (async-signal-safe only); the table of
 * dispositions changes under a spin lock taken with every signal blocked. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "qaudit/control.h"
#include "host.h"

#define MAX_SIGNAL 65

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*handler_fn)(int);

static sigaction_fn real_sigaction;
/* Per signal: who handles it, and the disposition the program believes it has set there.
 * Changed with every signal blocked, under table_lock. */
enum owner {
    PROGRAM,    /* the program's disposition, installed as it set it */
    INTERPOSER, /* the interposer's handler; the program believes SIG_DFL (or SIG_IGN) */
    TRAMPOLINE  /* the program's handler, called by the interposer's trampoline */
};
static _Atomic int owner[MAX_SIGNAL];
static struct sigaction believed[MAX_SIGNAL];

static atomic_flag table_lock = ATOMIC_FLAG_INIT;
static atomic_int claim_reported;
/* qaudit detach put the program's dispositions back: sigaction and signal pass through. */
static atomic_bool stepped_aside;

/* The signals whose default action ends the process, and which a handler can catch. */
static const int ending[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGILL,  SIGTRAP, SIGABRT,
                             SIGBUS,  SIGFPE,  SIGUSR1,   SIGSEGV, SIGUSR2, SIGPIPE,
                             SIGALRM, SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM,
                             SIGPROF, SIGIO,   SIGPWR,    SIGSYS};

static bool is_ending(int signo)
{
    for (size_t i = 0; i < sizeof ending / sizeof ending[0]; i++)
        if (ending[i] == signo)
            return true;
    return false;
}

/* SA_SIGINFO does not change what SIG_DFL and SIG_IGN mean: the kernel reads the handler alone
 * (a program that reuses its struct with SA_SIGINFO set and the handler put back is at default). */
static bool is_default(const struct sigaction *act)
{
    return act->sa_handler == SIG_DFL;
}

static bool is_ignored(const struct sigaction *act)
{
    return act->sa_handler == SIG_IGN;
}

static bool is_handler(const struct sigaction *act)
{
    return !is_default(act) && !is_ignored(act);
}

static sigaction_fn next_sigaction(void)
{
    if (real_sigaction == NULL)
        real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    return real_sigaction;
}

/* The table is changed with every signal blocked, so a handler of the program that calls
 * sigaction cannot interrupt a change and wait for the lock forever. */
static void lock_table(sigset_t *saved)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, saved);
    while (atomic_flag_test_and_set_explicit(&table_lock, memory_order_acquire))
        ;
}

static void unlock_table(const sigset_t *saved)
{
    atomic_flag_clear_explicit(&table_lock, memory_order_release);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* The interposer's own handlers: what they call is tagged QA_CTX_SIGNAL_SAFE (base/context.h);
 * a -DQA_DEBUG build counts them on the thread, and qa_dump asserts it is not inside one. */
QA_CTX_SIGNAL_SAFE static void on_dump_signal(int signo)
{
    (void)signo;
    int saved = errno;
    qa_ctx_handler_enter();
    qa_writer_wake();
    qa_ctx_handler_leave();
    errno = saved;
}

QA_CTX_SIGNAL_SAFE static void on_ending_signal(int signo, siginfo_t *info, void *context)
{
    (void)info, (void)context;
    int saved = errno;
    qa_ctx_handler_enter();
    if (!qa_inert)
        qa_dump_final(QA_DUMP_FATAL, signo);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    atomic_store(&owner[signo], PROGRAM);
    real_sigaction(signo, &dfl, NULL);
    /* Raised again at this thread: delivered as soon as the handler returns (the signal is
     * blocked until then), with the default action, whatever the first one's cause was. */
    tgkill(getpid(), gettid(), signo);
    qa_ctx_handler_leave();
    errno = saved;
}

static bool install(int signo, const struct sigaction *program_view);

/* The program's handler for an ending signal, called through here. SA_RESETHAND is the kernel's
 * to do no more (the trampoline is installed without it): the program's view goes back to SIG_DFL
 * and the final-dump handler takes its place, as the kernel's reset would have left the default
 * action, before the program's handler runs (and perhaps raises the signal again). */
static void on_program_signal(int signo, siginfo_t *info, void *context)
{
    int saved = errno;
    sigset_t table;
    lock_table(&table);
    struct sigaction program = believed[signo];
    if (atomic_load(&owner[signo]) == TRAMPOLINE && (program.sa_flags & SA_RESETHAND)) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        install(signo, &dfl);
    }
    unlock_table(&table);
    qa_note_last_signal(signo);
    errno = saved;
    if (program.sa_flags & SA_SIGINFO)
        program.sa_sigaction(signo, info, context);
    else if (is_handler(&program))
        program.sa_handler(signo);
}

/* The program's handler for an ending signal, behind the trampoline; the caller holds the
 * table. The kernel applies the program's mask and flags (SA_NODEFER, SA_ONSTACK, SA_RESTART). */
static bool install_trampoline(int signo, const struct sigaction *program)
{
    struct sigaction sa = *program;
    sa.sa_flags = (program->sa_flags & ~(int)SA_RESETHAND) | SA_SIGINFO;
    sa.sa_sigaction = on_program_signal;
    if (real_sigaction(signo, &sa, NULL) != 0)
        return false;
    believed[signo] = *program;
    atomic_store(&owner[signo], TRAMPOLINE);
    return true;
}

/* Installs the interposer's handler for signo; the caller holds the table. */
static bool install(int signo, const struct sigaction *program_view)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigfillset(&sa.sa_mask);
    if (signo == qa_cfg.signal) {
        sa.sa_handler = on_dump_signal;
        sa.sa_flags = SA_RESTART;
    } else {
        sa.sa_sigaction = on_ending_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    }
    if (real_sigaction(signo, &sa, NULL) != 0)
        return false;
    believed[signo] = *program_view;
    atomic_store(&owner[signo], INTERPOSER);
    return true;
}

/* The program handles the dump signal itself: dumps on that signal are off (`qaudit snapshot`
 * asks through the control record instead). Said on stderr only when the user chose the signal:
 * otherwise nothing was lost, and a server's log is no place for it. */
static void dump_signal_claimed(void)
{
    qa_control_signal_state(QAUDIT_SIGNAL_CLAIMED);
    if (qa_cfg.signal_explicit && atomic_exchange(&claim_reported, 1) == 0)
        qa_log("the program handles %s itself: dumps on that signal are off (QAUDIT_SIGNAL); "
               "qaudit snapshot still works",
               qa_signal_name(qa_cfg.signal));
}

/* At start-up (or qaudit attach): the dump signal and every ending signal the program has left
 * at its default; the program's handlers of ending signals behind the trampoline. */
void qa_signals_install(void)
{
    if (next_sigaction() == NULL) {
        qa_log("cannot find sigaction; no dumps on signals");
        return;
    }
    sigset_t saved;
    lock_table(&saved);
    atomic_store(&stepped_aside, false);
    for (int signo = 1; signo < MAX_SIGNAL; signo++) {
        bool dump = signo == qa_cfg.signal;
        if (!dump && !is_ending(signo))
            continue;
        struct sigaction now;
        if (real_sigaction(signo, NULL, &now) != 0)
            continue;
        if (is_default(&now) || (dump && is_ignored(&now)))
            install(signo, &now);
        else if (dump)
            dump_signal_claimed();
        else if (is_handler(&now)) /* set before the preload started (an earlier preload) */
            install_trampoline(signo, &now);
    }
    unlock_table(&saved);
}

/* qaudit detach: what the program believes is put back where the interposer's handler or
 * trampoline stands, and from then on the program's calls pass through (its entries into this
 * file are restored next; a call already inside sees stepped_aside under the table lock). */
void qa_signals_restore(void)
{
    if (next_sigaction() == NULL)
        return;
    sigset_t saved;
    lock_table(&saved);
    atomic_store(&stepped_aside, true);
    for (int signo = 1; signo < MAX_SIGNAL; signo++)
        if (atomic_load(&owner[signo]) != PROGRAM) {
            real_sigaction(signo, &believed[signo], NULL);
            atomic_store(&owner[signo], PROGRAM);
        }
    unlock_table(&saved);
}

/* The program sets (act) or reads (old) the disposition of a signal the interposer manages. */
static int program_sigaction(int signo, const struct sigaction *act, struct sigaction *old)
{
    bool dump = signo == qa_cfg.signal;
    sigset_t saved;
    lock_table(&saved);
    int result = 0;
    if (atomic_load(&stepped_aside)) {
        result = real_sigaction(signo, act, old);
        unlock_table(&saved);
        return result;
    }
    if (atomic_load(&owner[signo]) == PROGRAM) {
        result = real_sigaction(signo, act, old);
        /* A fatal signal put back to its default (a crash handler about to re-raise) gets the
         * final dump again, and a handler of the program's goes behind the trampoline; the dump
         * signal, once the program's, stays the program's. */
        if (result == 0 && act && !dump && is_default(act))
            install(signo, act);
        else if (result == 0 && act && !dump && is_handler(act))
            install_trampoline(signo, act);
        unlock_table(&saved);
        return result;
    }
    if (old)
        *old = believed[signo];
    if (act && (is_default(act) || (dump && is_ignored(act)))) {
        if (atomic_load(&owner[signo]) == TRAMPOLINE)
            result = install(signo, act) ? 0 : -1;
        else
            believed[signo] = *act;
    } else if (act && !dump && is_handler(act)) {
        result = install_trampoline(signo, act) ? 0 : -1;
    } else if (act) {
        result = real_sigaction(signo, act, NULL);
        if (result == 0) {
            atomic_store(&owner[signo], PROGRAM);
            if (dump)
                dump_signal_claimed();
        }
    }
    unlock_table(&saved);
    return result;
}

static bool managed(int signo)
{
    return signo > 0 && signo < MAX_SIGNAL && atomic_load(&qa_ready) == 2 &&
           !atomic_load(&stepped_aside) && (signo == qa_cfg.signal || is_ending(signo));
}

/* The exported sigaction's body, which signal() and its variants call (not the exported name). */
int qa_sigaction_entry(int signo, const struct sigaction *act, struct sigaction *old);

int qa_sigaction_entry(int signo, const struct sigaction *act, struct sigaction *old)
{
    if (next_sigaction() == NULL) {
        errno = ENOSYS;
        return -1;
    }
    if (!managed(signo))
        return real_sigaction(signo, act, old);
    return program_sigaction(signo, act, old);
}
extern int sigaction(int signo, const struct sigaction *act, struct sigaction *old)
    QA_EXPORT_AS(qa_sigaction_entry);

/* signal() and its variants, with glibc's semantics, through the sigaction above (its body). */
static handler_fn set_handler(int signo, handler_fn handler, int flags)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = flags;
    sigemptyset(&act.sa_mask);
    if (!(flags & SA_NODEFER))
        sigaddset(&act.sa_mask, signo);
    if (signo <= 0 || signo >= MAX_SIGNAL || qa_sigaction_entry(signo, &act, &old) != 0) {
        errno = EINVAL;
        return SIG_ERR;
    }
    return old.sa_handler;
}

QA_EXPORT handler_fn signal(int signo, handler_fn handler)
{
    return set_handler(signo, handler, SA_RESTART);
}

QA_EXPORT handler_fn bsd_signal(int signo, handler_fn handler)
{
    return set_handler(signo, handler, SA_RESTART);
}

QA_EXPORT handler_fn sysv_signal(int signo, handler_fn handler)
{
    return set_handler(signo, handler, SA_RESETHAND | SA_NODEFER);
}
