/* Calling a function of the process in one of its stopped threads (the classic ptrace call, as
 * gdb's `call` does it): its data is copied below the thread's stack pointer, past the red zone
 * the System V ABI lets a leaf function use; the return address is 0, so that the return faults
 * and stops the thread there, where the result is read. Registers are put back afterwards by
 * thread_release (ptrace_stop.c). orig_rax is set to -1 meanwhile, so that the kernel does not
 * take the call for an interrupted system call to restart. x86-64 System V calling convention. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include "ptrace_inject.h"

#define RED_ZONE 128
#define CALL_TIMEOUT_MS 10000
#define STALL_MS 50 /* a call not back by then may wait for a lock a stopped thread holds */

static int write_remote(pid_t tid, uint64_t at, const void *data, size_t size)
{
    struct iovec local = {(void *)data, size};
    struct iovec remote = {(void *)(uintptr_t)at, size};
    ssize_t n = process_vm_writev(tid, &local, 1, &remote, 1, 0);
    return n == (ssize_t)size ? 0 : (n < 0 ? errno : EFAULT);
}

/* The registers of the call: rsp so that rsp + 8 is 16-byte aligned at the function's entry,
 * as after a call instruction, with the return address 0 at rsp and the data above it. The first
 * argument is the data's address, or first when there is no data. */
static int prepare(struct stopped_thread *t, uint64_t fn, const void *data, size_t size,
                   uint64_t first, uint64_t arg, struct user_regs_struct *regs)
{
    *regs = t->regs;
    uint64_t data_at = (t->regs.rsp - RED_ZONE - 256 - size) & ~(uint64_t)15;
    uint64_t zero = 0;
    int err = data != NULL ? write_remote(t->tid, data_at, data, size) : 0;
    if (err == 0)
        err = write_remote(t->tid, data_at - 8, &zero, sizeof zero);
    if (err != 0)
        return err;
    regs->rsp = data_at - 8;
    regs->rip = fn;
    regs->rdi = data != NULL ? data_at : first;
    regs->rsi = arg;
    regs->rax = 0;
    regs->orig_rax = (uint64_t)-1;
    return 0;
}

/* A call that did not come back: the thread is stopped where it is, so that thread_release can
 * let it go. */
static void abandon(struct stopped_thread *t)
{
    int status;
    if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0)
        waitpid(t->tid, &status, __WALL);
}

/* Waits for the call's end; other stops on the way (a signal for the thread, a group stop) are
 * passed on. 0 with the registers at the end, or an errno. */
static int wait_return(struct stopped_process *p, struct stopped_thread *t, int stall_ms,
                       struct user_regs_struct *regs, char *why, size_t size)
{
    long long start = monotonic_ns();
    bool others_released = false;
    for (;;) {
        int status;
        pid_t got = waitpid(t->tid, &status, WNOHANG | __WALL);
        long long waited_ms = (monotonic_ns() - start) / 1000000;
        if (got == 0) {
            if (!others_released && waited_ms >= stall_ms) {
                /* A lock the call needs may be held by a stopped thread: let the others go. */
                for (int i = 0; i < p->count; i++)
                    if (&p->threads[i] != t)
                        thread_release(&p->threads[i]);
                others_released = true;
            }
            if (waited_ms > CALL_TIMEOUT_MS) {
                snprintf(why, size, "the call in thread %d did not return within %d s", (int)t->tid,
                         CALL_TIMEOUT_MS / 1000);
                abandon(t);
                return ETIMEDOUT;
            }
            nanosleep(&(struct timespec){0, 100 * 1000}, NULL);
            continue;
        }
        if (got < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
            snprintf(why, size, "the process ended during the call");
            t->released = true;
            return ESRCH;
        }
        if (!WIFSTOPPED(status))
            continue;
        int sig = WSTOPSIG(status);
        if ((status >> 16) == 0 && (sig == SIGSEGV || sig == SIGBUS)) {
            if (ptrace(PTRACE_GETREGS, t->tid, 0, regs) != 0)
                return errno;
            if (regs->rip == 0)
                return 0; /* returned to address 0: done */
            snprintf(why, size, "the call faulted in thread %d at 0x%llx (signal %d)", (int)t->tid,
                     (unsigned long long)regs->rip, sig);
            return EFAULT;
        }
        /* A group stop or another signal: pass it on (a handler runs below the call's frame). */
        ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)((status >> 16) ? 0 : sig));
    }
}

static int call(struct stopped_process *p, struct stopped_thread *t, uint64_t fn, const void *data,
                size_t size, uint64_t first, uint64_t arg, uint64_t *result, char *why,
                size_t why_size)
{
    struct user_regs_struct regs;
    int err = prepare(t, fn, data, size, first, arg, &regs);
    if (err != 0) {
        snprintf(why, why_size, "cannot write below the stack of thread %d: %s", (int)t->tid,
                 strerror(err));
        return err;
    }
    if (ptrace(PTRACE_SETREGS, t->tid, 0, &regs) != 0 || ptrace(PTRACE_CONT, t->tid, 0, 0) != 0) {
        err = errno;
        snprintf(why, why_size, "cannot start the call in thread %d: %s", (int)t->tid,
                 strerror(err));
        return err;
    }
    err = wait_return(p, t, STALL_MS, &regs, why, why_size);
    if (err == 0)
        *result = regs.rax;
    return err;
}

int remote_call(struct stopped_process *p, struct stopped_thread *t, uint64_t fn, const void *data,
                size_t size, uint64_t arg, uint64_t *result, char *why, size_t why_size)
{
    return call(p, t, fn, data, size, 0, arg, result, why, why_size);
}

int remote_call_value(struct stopped_process *p, struct stopped_thread *t, uint64_t fn,
                      uint64_t first, uint64_t *result, char *why, size_t why_size)
{
    return call(p, t, fn, NULL, 0, first, 0, result, why, why_size);
}
