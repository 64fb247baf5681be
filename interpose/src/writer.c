/* When dumps are written: at exit (a destructor), on QAUDIT_SIGNAL (the handler only writes a
 * byte to a pipe; a writer thread with every signal blocked does the work), every QAUDIT_INTERVAL
 * seconds, and in a forked child, which starts its own account and writes its own file. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

void qa_dump_started(void);
void qa_dump_lock(void);
void qa_dump_unlock(void);
void qa_sites_reset_after_fork(void);

static int wake_pipe[2] = {-1, -1};
static atomic_int exit_dumped;

static void on_signal(int signo)
{
    (void)signo;
    int saved = errno;
    if (wake_pipe[1] >= 0)
        (void)!write(wake_pipe[1], "s", 1);
    errno = saved;
}

static void *writer_main(void *arg)
{
    (void)arg;
    struct qa_thread *t = qa_self();
    if (t)
        qa_guard(t); /* nothing this thread does is the program's allocation */
    int timeout = qa_cfg.interval ? (int)qa_cfg.interval * 1000 : -1;
    for (;;) {
        struct pollfd pfd = {.fd = wake_pipe[0], .events = POLLIN};
        int n = poll(&pfd, 1, timeout);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return NULL;
        if (n == 0) {
            qa_dump(QA_DUMP_INTERVAL);
            continue;
        }
        char drain[64];
        while (read(wake_pipe[0], drain, sizeof drain) > 0)
            ;
        qa_dump(QA_DUMP_SIGNAL);
    }
}

/* The writer thread starts with every signal blocked, so it can never take the program's
 * SIGTERM or SIGINT, nor its own dump signal. */
static void start_thread(void)
{
    if (qa_cfg.signal == 0 && qa_cfg.interval == 0)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, writer_main, NULL) != 0)
        qa_log("cannot start the dump writer thread; dumps only at exit");
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void before_fork(void)
{
    qa_dump_lock();
    qa_blocks_lock_all();
}

static void after_fork_parent(void)
{
    qa_blocks_unlock_all();
    qa_dump_unlock();
}

static void after_fork_child(void)
{
    qa_blocks_unlock_all();
    qa_dump_unlock();
    qa_stats_reset_after_fork();
    qa_sites_reset_after_fork();
    qa_queue_reset_after_fork();
    atomic_store(&exit_dumped, 0);
    qa_writer_after_fork_child();
}

void qa_writer_after_fork_child(void)
{
    if (wake_pipe[0] >= 0) {
        close(wake_pipe[0]);
        close(wake_pipe[1]);
    }
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        wake_pipe[0] = wake_pipe[1] = -1;
    start_thread();
}

void qa_writer_start(void)
{
    qa_dump_started();
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        qa_log("cannot create the dump pipe; dumps only at exit");
        return;
    }
    if (qa_cfg.signal != 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(qa_cfg.signal, &sa, NULL);
    }
    start_thread();
}

__attribute__((destructor)) static void dump_at_exit(void)
{
    if (atomic_load(&qa_ready) == 2 && atomic_exchange(&exit_dumped, 1) == 0)
        qa_dump(QA_DUMP_EXIT);
}
