/* Stopping every thread of a process for qaudit attach, and letting each go exactly as it was.
 * PTRACE_SEIZE attaches without a signal of its own (PTRACE_ATTACH's SIGSTOP would be seen by
 * the program), PTRACE_INTERRUPT stops each thread. A thread blocked in a system call is taken
 * out of it: most calls come back by themselves when let go (the kernel restarts them:
 * -ERESTARTSYS and kin), but a few return EINTR to the program whenever a thread stops (epoll_wait,
 * io_uring_enter, sigtimedwait..., signal(7), "Interruption of system calls by stop signals").
 * Those calls are restarted here when EINTR there means "nothing happened" (so that restarting is
 * what the program would have seen without the stop); connect() is not (a restart would say
 * EALREADY): it is left to the kernel's answer, as any SIGSTOP would. A thread in an
 * uninterruptible wait (state D: a vfork parent waiting for its child, disk or NFS I/O) does not
 * stop; after STOP_WAIT_MS the attach gives up and lets every thread go. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrace_inject.h"

#define STOP_WAIT_MS 1000

long long monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static bool listed(const struct stopped_process *p, pid_t tid)
{
    for (int i = 0; i < p->count; i++)
        if (p->threads[i].tid == tid)
            return true;
    return false;
}

/* Seizes and interrupts every thread not seized yet; how many were new, or -errno. Threads a
 * running thread creates meanwhile show up in the next pass; once every thread is stopped, none
 * can appear. */
static int seize_new(struct stopped_process *p)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)p->pid);
    DIR *dir = opendir(path);
    if (dir == NULL)
        return -ESRCH;
    int added = 0, err = 0;
    struct dirent *e;
    while (err == 0 && (e = readdir(dir)) != NULL) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || listed(p, tid))
            continue;
        if (p->count == STOPPED_MAX) {
            err = -E2BIG;
            break;
        }
        if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) {
            if (errno != ESRCH) /* a thread that just exited is no concern */
                err = -errno;
            continue;
        }
        struct stopped_thread *t = &p->threads[p->count++];
        memset(t, 0, sizeof *t);
        t->tid = tid;
        ptrace(PTRACE_INTERRUPT, tid, 0, 0);
        added++;
    }
    closedir(dir);
    return err ? err : added;
}

/* Waits for one seized thread's stop; 1 stopped, 0 not yet, -1 gone. */
static int poll_stop(struct stopped_thread *t)
{
    int status;
    pid_t got = waitpid(t->tid, &status, WNOHANG | __WALL);
    if (got == 0)
        return 0;
    if (got < 0 || WIFEXITED(status) || WIFSIGNALED(status))
        return -1;
    if (!WIFSTOPPED(status))
        return 0;
    t->interrupted = (status >> 16) == PTRACE_EVENT_STOP;
    if (!t->interrupted)
        t->signal = WSTOPSIG(status); /* a signal was on its way: it goes on at release */
    if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) != 0)
        return -1;
    return 1;
}

/* What a thread that would not stop is doing, for the one line. */
static void describe_unstopped(pid_t pid, pid_t tid, char *why, size_t size)
{
    char path[96], state[512] = "", call[64] = "";
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    FILE *f = fopen(path, "r");
    char s = '?';
    if (f != NULL && fgets(state, sizeof state, f) != NULL) {
        const char *close = strrchr(state, ')');
        if (close != NULL && close[1] == ' ')
            s = close[2];
    }
    if (f != NULL)
        fclose(f);
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
    f = fopen(path, "r");
    long nr = -1;
    if (f != NULL && fscanf(f, "%ld", &nr) == 1 && nr == SYS_vfork)
        snprintf(call, sizeof call, " (vfork: waiting for its child to exec or exit)");
    else if (nr >= 0)
        snprintf(call, sizeof call, " (system call %ld)", nr);
    if (f != NULL)
        fclose(f);
    snprintf(why, size,
             "thread %d is in a system call that cannot be interrupted (state %c)%s; nothing was "
             "changed, try again when it has returned",
             (int)tid, s, call);
}

/* Every thread seized is waited for; those gone are dropped from the list. */
static int wait_all(struct stopped_process *p, char *why, size_t size)
{
    long long deadline = monotonic_ns() + STOP_WAIT_MS * 1000000ll;
    for (;;) {
        int pending = -1;
        for (int i = 0; i < p->count; i++) {
            struct stopped_thread *t = &p->threads[i];
            if (t->stopped)
                continue;
            int r = poll_stop(t);
            if (r == 1)
                t->stopped = true;
            else if (r < 0)
                p->threads[i--] = p->threads[--p->count];
            else
                pending = i;
        }
        if (pending < 0)
            return 0;
        if (monotonic_ns() > deadline) {
            describe_unstopped(p->pid, p->threads[pending].tid, why, size);
            for (int i = 0; i < p->count; i++)
                p->threads[i].released = !p->threads[i].stopped; /* freed when we exit */
            return ETIMEDOUT;
        }
        nanosleep(&(struct timespec){0, 200 * 1000}, NULL);
    }
}

int process_stop(pid_t pid, struct stopped_process *p, char *why, size_t size)
{
    p->pid = pid;
    p->count = 0;
    p->started_ns = monotonic_ns();
    int added;
    do {
        added = seize_new(p);
        if (added < 0) {
            int err = -added;
            snprintf(why, size, "%s", err == EPERM ? "ptrace refused (EPERM)" : strerror(err));
            process_release(p);
            return err;
        }
        int err = wait_all(p, why, size);
        if (err != 0) {
            process_release(p);
            return err;
        }
    } while (added > 0);
    if (p->count == 0) {
        snprintf(why, size, "no thread of it could be stopped (it has ended)");
        return ESRCH;
    }
    p->stopped_ns = monotonic_ns();
    return 0;
}

/* Calls that return EINTR when their thread merely stops, and whose restart with the same
 * arguments is what the program would have seen had it not stopped (EINTR from them means that
 * nothing was transferred or consumed). */
static bool restartable(long nr)
{
    static const long calls[] = {
        SYS_read,           SYS_write,           SYS_readv,      SYS_writev,
        SYS_recvfrom,       SYS_recvmsg,         SYS_sendto,     SYS_sendmsg,
        SYS_accept,         SYS_accept4,         SYS_epoll_wait, SYS_epoll_pwait,
        SYS_io_uring_enter, SYS_rt_sigtimedwait, SYS_semop,      SYS_semtimedop,
        SYS_wait4,          SYS_waitid,          SYS_msgrcv,     SYS_msgsnd,
        SYS_mq_timedsend,   SYS_mq_timedreceive, SYS_flock,
#ifdef SYS_epoll_pwait2
        SYS_epoll_pwait2,
#endif
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (calls[i] == nr)
            return true;
    return false;
}

void thread_release(struct stopped_thread *t)
{
    if (t->released)
        return;
    struct user_regs_struct regs = t->regs;
    if (t->interrupted && (long long)regs.orig_rax >= 0 && (long long)regs.rax == -EINTR &&
        restartable((long)regs.orig_rax)) {
        regs.rax = regs.orig_rax; /* the syscall instruction again, with the same arguments */
        regs.rip -= 2;
    }
    ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
    ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->signal);
    t->released = true;
}

void process_release(struct stopped_process *p)
{
    for (int i = 0; i < p->count; i++)
        thread_release(&p->threads[i]);
}

/* In a system call: orig_rax holds its number (-1 outside one). futex waits come last: the
 * thread may be inside a lock of the program's (or the allocator's) waiting for another. */
static int preference(const struct stopped_thread *t, pid_t pid)
{
    long long nr = (long long)t->regs.orig_rax;
    int score = nr < 0 ? 0 : nr == SYS_futex ? 2 : 4;
    return score + (t->tid != pid) + (t->interrupted ? 0 : -10);
}

struct stopped_thread *process_pick_thread(struct stopped_process *p)
{
    struct stopped_thread *best = NULL;
    for (int i = 0; i < p->count; i++)
        if (best == NULL || preference(&p->threads[i], p->pid) > preference(best, p->pid))
            best = &p->threads[i];
    return best;
}
