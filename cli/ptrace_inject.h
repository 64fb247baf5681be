/* Stopping every thread of a running process with ptrace (PTRACE_SEIZE, PTRACE_INTERRUPT), calling
 * a function of its own in one of them, and letting it go exactly as it was: what qaudit attach
 * does to load the preload without gdb. x86-64 only. */
#ifndef QAUDIT_CLI_PTRACE_INJECT_H
#define QAUDIT_CLI_PTRACE_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* ---- ptrace_stop.c ---- */
struct stopped_thread {
    pid_t tid;
    struct user_regs_struct regs; /* as it stopped: put back when it is let go */
    bool stopped;                 /* its stop has been seen */
    bool interrupted;             /* stopped by our PTRACE_INTERRUPT (not a signal's delivery) */
    int signal;                   /* a signal whose delivery it stopped for: delivered at release */
    bool released;
};

#define STOPPED_MAX 4096
struct stopped_process {
    pid_t pid;
    int count;
    struct stopped_thread threads[STOPPED_MAX];
    long long started_ns, stopped_ns; /* CLOCK_MONOTONIC: the first seize, every thread stopped */
};

/* Seizes and stops every thread of pid. 0, or an errno with one line in why (nothing is left
 * stopped then): EPERM (not permitted), ESRCH (gone), ETIMEDOUT (a thread would not stop: an
 * uninterruptible system call), E2BIG (more threads than STOPPED_MAX). */
int process_stop(pid_t pid, struct stopped_process *p, char *why, size_t size);
/* Lets one thread go: its registers back (a system call our stop interrupted with EINTR made to
 * start again, when doing so is what the program would have seen without the stop), the signal
 * it stopped for delivered, ptrace detached. */
void thread_release(struct stopped_thread *t);
void process_release(struct stopped_process *p); /* every thread not released yet */
/* The thread to borrow for calls: one blocked in a system call (it holds no lock of the C
 * library's in user space), preferably not the main thread (a thread stack is mapped whole). */
struct stopped_thread *process_pick_thread(struct stopped_process *p);
long long monotonic_ns(void);

/* ---- ptrace_call.c ---- */
/* Calls fn(data copied below the thread's stack pointer, arg) in the stopped thread t and waits
 * for it to return (to address 0: the fault stops it there). If it has not returned after 50 ms,
 * the other threads of p are released (one of them may hold a lock it waits for); after 10 s it
 * is given up (ETIMEDOUT) and t stopped where it is. 0 and the return value in *result, or an
 * errno with one line in why; t's registers are put back by thread_release either way. */
int remote_call(struct stopped_process *p, struct stopped_thread *t, uint64_t fn, const void *data,
                size_t size, uint64_t arg, uint64_t *result, char *why, size_t why_size);
/* The same with a number for first argument (close(fd)): no data is copied. */
int remote_call_value(struct stopped_process *p, struct stopped_thread *t, uint64_t fn,
                      uint64_t first, uint64_t *result, char *why, size_t why_size);

/* ---- attach_load.c ---- */
/* A function of the process's C library (glibc 2.34 and later; libdl's before): its address
 * there, or 0. */
uint64_t libc_function(pid_t pid, const char *name);
/* The process's file-system user and group ids (/proc/PID/status): whose files its dumps are. */
void process_ids(pid_t pid, uid_t *uid, gid_t *gid);
/* Loads library in the stopped process p (thread t borrowed): by its path, else from a memfd
 * made there (*from_memory, why then says why the path would not do). 0, or an errno with one
 * line in why: which user of the process could not load what, and what to do. */
int attach_load(struct stopped_process *p, struct stopped_thread *t, const char *library,
                bool *from_memory, char *why, size_t size);

#endif
