/* When dumps are written: at exit (once every destructor has run), on request (the dump signal's
 * handler bumps a futex word and wakes a writer thread that has every signal blocked; no
 * descriptor is involved, so the program's fds are never touched), every QAUDIT_INTERVAL
 * seconds, and in a forked child (fork.c), which starts its own account, its own writer thread
 * and its own files. The thread has a descriptor table of its own (base/fd_table.c), so what it
 * opens never takes a number the program's next open() would get. It starts on its creator's
 * processor and stays there until it first wakes (pin_to_creator below). It starts lazily, when
 * first needed (below, "lazily").
 * Context: the writer thread (every signal blocked, the guard held for its whole life), the exit
 * handler the destructor registers, fork's handler in the child, and the program's allocation
 * calls (their looks: output/looks.c) or a call through ptrace
 * (qaudit_writer_start). */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "qaudit/control.h"
#include "look_soon.h"
#include "output.h"

/* Dump requests so far; the writer dumps whenever it has seen fewer. */
static _Atomic int requests QA_FORK_STATE;

/* The running writer's tid (0: none), and the request that it end for good (main_thread_leaving
 * below); once ended for good, it never starts again in this image. */
static _Atomic int writer_tid QA_FORK_STATE;
/* ended_for_good, when it started and stopped, whether it failed and whether the image has forked
 * (it keeps one thread then: qa_writer_due_at) are in qa_writer_state (dump_render.c renders
 * them). */
/* A thread registered since this image's fork (qa_writer_note_thread, program_threaded). */
static _Atomic bool threads_since_fork QA_FORK_STATE;

void qa_writer_wake(void)
{
    /* A writer that has not started (qa_writer_waiting): the handler writes the dump itself when
     * it can (an idle worker would otherwise wait for its next malloc), as a fatal signal's is
     * written, or leaves the request to the writer the next malloc starts. */
    if (atomic_load_explicit(&qa_writer_waiting, memory_order_relaxed) &&
        qa_dump_in_handler(QA_DUMP_SIGNAL))
        return;
    atomic_fetch_add(&requests, 1);
    qa_futex(&requests, FUTEX_WAKE, 1, NULL);
}

/* Sleeps until a dump is requested (the futex word moves past seen) or the deadline passes
 * (CLOCK_MONOTONIC, UINT64_MAX for none). */
static void sleep_until(int seen, uint64_t deadline)
{
    uint64_t now = qa_monotonic_ns();
    if (deadline <= now)
        return;
    uint64_t wait = deadline - now;
    struct timespec timeout = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
    qa_futex(&requests, FUTEX_WAIT, seen, deadline == UINT64_MAX ? NULL : &timeout);
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* A request `qaudit snapshot` wrote into the control record: a dump, then the request served
 * (whether the dump was written or failed: the record says which). */
static void serve_control_request(void)
{
    uint64_t request = qa_control_pending_request();
    if (request == 0)
        return;
    qa_dump(QA_DUMP_SNAPSHOT);
    qa_control_request_served(request);
}

static void (*attach_poll)(void), (*detach_restore)(void);

void qa_writer_attached(void (*poll)(void), void (*restore)(void))
{
    attach_poll = poll;
    detach_restore = restore;
}

/* qaudit detach's request: every entry point restored, the last dump (so it holds every call
 * counted), and the thread ends (true). Only an attached process has a detach_restore. */
static bool serve_detach_request(void)
{
    uint64_t request = detach_restore ? qa_control_pending_detach() : 0;
    if (request == 0)
        return false;
    detach_restore();
    qa_dump(QA_DUMP_DETACH);
    qa_control_detach_served(request);
    return true;
}

/* The processors the writer may use once it has woken: its creator's at the start; and the one
 * it starts on. */
static cpu_set_t creator_cpus;
static bool pinned;
static int pinned_cpu;

/* The writer starts pinned to the processor its creator runs on. A thread that has run on another
 * processor makes the process's later page-table changes (copy-on-write after a fork, the exit)
 * and the wake-ups at its exit reach that processor too; in a forked child that lives a
 * millisecond that was a quarter of the interposer's cost there (bench/RESULTS.md, "Forks"). Pinned
 * only when its processor and its creator's set can be read; glibc's attribute copy is allocated
 * under the caller's guard. */
static void pin_to_creator(pthread_attr_t *attr)
{
    int cpu = sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE ||
        pthread_getaffinity_np(pthread_self(), sizeof creator_cpus, &creator_cpus) != 0)
        return;
    cpu_set_t here;
    CPU_ZERO(&here);
    CPU_SET(cpu, &here);
    pinned_cpu = cpu;
    pinned = pthread_attr_setaffinity_np(attr, sizeof here, &here) == 0;
}

/* At the writer's first wake-up (its first poll, QA_REQUEST_POLL_MS on, or a request): from then
 * on it may run where its creator could, unless someone (taskset -a) has placed it meanwhile. */
static void unpin(void)
{
    if (!pinned)
        return;
    pinned = false;
    cpu_set_t now;
    if (pthread_getaffinity_np(pthread_self(), sizeof now, &now) == 0 && CPU_COUNT(&now) == 1 &&
        CPU_ISSET(pinned_cpu, &now))
        pthread_setaffinity_np(pthread_self(), sizeof creator_cpus, &creator_cpus);
}

/* Serves dump requests (the dump signal, the control record), QAUDIT_INTERVAL's dumps and the
 * timeline's points, each on its own schedule; after an attach, the detach request. */
QA_CTX_WRITER static void *writer_main(void *arg)
{
    (void)arg;
    qa_ctx_writer_thread();
    struct qa_thread *t = qa_self();
    if (t)
        qa_guard(t);     /* nothing this thread does is the program's allocation */
    qa_fd_table_leave(); /* its /proc reads and dump files take none of the program's numbers */
    int seen = 0;        /* requests made before this thread first ran are served too */
    uint64_t interval_ns = (uint64_t)qa_cfg.interval * 1000000000u;
    uint64_t next_dump = interval_ns ? qa_monotonic_ns() + interval_ns : UINT64_MAX;
    uint64_t poll_ns = (uint64_t)QA_REQUEST_POLL_MS * 1000000u;
    atomic_store(&writer_tid, (int)gettid());
    qa_writer_state.started_at_ns = qa_now_ns();
    qa_control_writer_state(QAUDIT_WRITER_RUNNING);
    for (;;) {
        uint64_t due = earliest(qa_timeline_due(), next_dump);
        sleep_until(seen, earliest(due, qa_monotonic_ns() + poll_ns));
        if (atomic_load(&qa_writer_state.ended_for_good))
            return NULL;
        unpin();
        int requested = atomic_load(&requests);
        if (requested != seen) {
            seen = requested;
            qa_dump(QA_DUMP_SIGNAL);
        }
        serve_control_request();
        if (serve_detach_request())
            return NULL;
        if (attach_poll)
            attach_poll();
        uint64_t now = qa_monotonic_ns();
        if (qa_timeline_move_wanted() || now >= qa_timeline_due())
            qa_timeline_take();
        if (now >= next_dump) {
            qa_dump(QA_DUMP_INTERVAL);
            next_dump = now + interval_ns;
        }
    }
    return NULL;
}

/* The writer, pinned or not: glibc applies the processor set as it creates the thread and fails
 * the creation when the set cannot be had (a cpuset changed since sched_getcpu), so a pinned
 * start that fails is tried again unpinned. */
static bool create_thread(bool pin)
{
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pinned = false;
    if (pin)
        pin_to_creator(&attr);
    bool started = pthread_create(&thread, &attr, writer_main, NULL) == 0;
    pthread_attr_destroy(&attr);
    return started;
}

/* The timeline's wake for a large move of the live bytes (records/timeline.c): the writer's
 * futex word woken, not moved, so no dump is asked for. */
static void wake_for_a_point(void)
{
    qa_futex(&requests, FUTEX_WAKE, 1, NULL);
}

/* A writer that could not start is not tried again (a process out of threads or memory would pay
 * for a failing pthread_create at every look): the image is from then on as one whose writer
 * waits for good. The dump signal's handler writes its dumps (qa_writer_wake) and the allocating
 * threads take the timeline's points (output/looks.c). */
static void fail_for_good(void)
{
    qa_log("cannot start the dump writer thread; dumps at exit and on the dump signal only");
    atomic_store(&qa_writer_state.ended_for_good, true);
    qa_writer_state.failed = true;
    qa_writer_state.stopped_at_ns = qa_now_ns();
    atomic_store(&qa_writer_waiting, true);
    qa_control_signal_state(QAUDIT_SIGNAL_NO_WRITER);
    qa_control_writer_state(QAUDIT_WRITER_FAILED);
}

/* The writer thread starts with every signal blocked, so it can never take the program's
 * SIGTERM or SIGINT, nor the dump signal. False when it could not start. */
static bool start_thread(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool started = create_thread(true) || create_thread(false);
    if (!started)
        fail_for_good();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return started;
}

/* The writer, started under the guard: glibc's allocations for the thread are not the
 * program's. t: the calling thread's record, or NULL. */
static bool start_guarded(struct qa_thread *t)
{
    bool was_busy = t ? qa_guard(t) : true;
    bool started = start_thread();
    if (t)
        qa_guard_restore(t, was_busy);
    return started;
}

/* The writer starts lazily, when first needed, unless it is needed on a schedule from the start
 * (QAUDIT_INTERVAL, an attach's poll). A thread makes a process take glibc's multi-threaded
 * paths for good: every fork then copies more (bench/RESULTS.md, "Forks"), and unshare of a user
 * namespace fails with EINVAL (`unshare -U` under the preload did). Most children of a shell or
 * a prefork server live a millisecond or two, and a thread's start there was a quarter of what
 * the interposer added to such a life. It starts at an allocation call made outside the C
 * library and the loader (whose own calls may hold a lock pthread_create takes),
 * QAUDIT_WRITER_LAZY_MS after the image's start or fork, or at once after a dump signal or a
 * request in the control record, or when the program has threads of its own; or when qaudit
 * snapshot calls qaudit_writer_start through ptrace, for a process that never allocates again.
 * Which calls look: a thread's first, then each of its first allocations and every so many
 * after them, fewer the faster it allocates (output/looks.c): the fast path carries one
 * countdown for it. So a process that allocates past its first 100 ms starts its writer then,
 * steady or growing; one that makes no allocation after them, and takes no request, starts
 * none, nor does one that has forked a child (qa_writer_after_fork_parent). Until it starts, a dump
 * signal's dump is written by the handler, and the timeline's points are taken by the allocating
 * threads at their looks and as their live bytes move (records/timeline.c); the first is due at the
 * start (a period after a fork). */
static uint64_t waiting_since_ns QA_FORK_STATE; /* CLOCK_MONOTONIC: the image's start or fork */

/* The writer for an image that needs it on a schedule starts now; any other waits (above). The
 * control record says which (after_fork: a forked child's record is updated in one step). */
static void start_or_wait(bool scheduled, bool after_fork)
{
    uint32_t state = scheduled ? QAUDIT_WRITER_STARTING : QAUDIT_WRITER_LAZY;
    if (after_fork)
        qa_control_after_fork_child(qa_image_start_ns(), state);
    else
        qa_control_writer_state(state);
    if (scheduled) {
        start_guarded(qa_self_if_registered());
        return;
    }
    atomic_store(&qa_writer_waiting, true);
}

/* The forked child's own writer: its dump requests start from zero (fork.c). */
void qa_writer_after_fork_child(void)
{
    atomic_store(&requests, 0);
    waiting_since_ns = qa_monotonic_ns();
    qa_timeline_start(waiting_since_ns); /* the parent's points are not the child's */
    qa_writer_state.started_at_ns = qa_writer_state.stopped_at_ns = 0;
    qa_writer_state.failed = false;
    atomic_store_explicit(&qa_writer_state.has_forked, false, memory_order_relaxed);
    atomic_store(&threads_since_fork, false);
    struct qa_thread *self = qa_self_if_registered();
    if (self != NULL)
        qa_look_soon(self, waiting_since_ns);
    start_or_wait(qa_cfg.interval != 0 || attach_poll != NULL, true);
}

/* Whether the program runs threads of its own. glibc's flag says so, except in a forked child of
 * a process that had a second thread (its writer, say): there it stays false for good although
 * the child has one thread, and a prefork server's every child would start its writer at once.
 * There a thread's registration after the fork says so (qa_writer_note_thread). */

void qa_writer_note_thread(void)
{
    if (qa_is_forked_child() && !atomic_load_explicit(&threads_since_fork, memory_order_relaxed))
        atomic_store(&threads_since_fork, true);
}

static bool program_threaded(void)
{
    return qa_is_forked_child() ? atomic_load_explicit(&threads_since_fork, memory_order_relaxed)
                                : !__libc_single_threaded;
}

/* A process that forks children (a prefork master, a shell, PostgreSQL's postmaster) starts no
 * writer for the time alone: with a second thread, each of its later forks would take glibc's
 * multi-threaded path (about 7 pages more a fork, bench/RESULTS.md "Forks"). Its allocating
 * threads take the timeline's points at the period as they allocate (output/looks.c); a request,
 * a dump signal or threads of its own still start the writer. */
void qa_writer_after_fork_parent(void)
{
    if (!atomic_load_explicit(&qa_writer_state.has_forked, memory_order_relaxed))
        atomic_store_explicit(&qa_writer_state.has_forked, true, memory_order_relaxed);
}

uint64_t qa_writer_due_at(void)
{
    if (!atomic_load_explicit(&qa_writer_waiting, memory_order_relaxed) ||
        atomic_load_explicit(&qa_writer_state.ended_for_good, memory_order_relaxed))
        return UINT64_MAX;
    if (atomic_load_explicit(&requests, memory_order_relaxed) != 0 ||
        qa_control_pending_request() != 0 || program_threaded())
        return 0;
    if (atomic_load_explicit(&qa_writer_state.has_forked, memory_order_relaxed))
        return UINT64_MAX;
    return waiting_since_ns + (uint64_t)QAUDIT_WRITER_LAZY_MS * 1000000u;
}

bool qa_writer_due_now(uintptr_t caller)
{
    uint64_t due = qa_writer_due_at();
    return due != UINT64_MAX && !qa_runtime_code_holds(caller) &&
           (due == 0 || qa_monotonic_ns() >= due);
}

int qa_writer_start_lazy(void)
{
    if (atomic_load(&qa_writer_state.ended_for_good))
        return -EAGAIN;
    if (!atomic_exchange(&qa_writer_waiting, false))
        return 0; /* started already, or not lazy: the control record says how it went */
    return start_guarded(qa_self()) ? 0 : -EAGAIN;
}

/* QAUDIT_ASSERT_DEPTH1=abort: the image's state before it aborts. */
static void dump_before_abort(void)
{
    qa_dump(QA_DUMP_REQUEST);
}

void qa_writer_start(bool attached)
{
    qa_queue_before_abort(dump_before_abort);
    qa_image_started();
    qa_dump_file_init(false);
    qa_control_init(qa_cfg.out_pattern, qa_cfg.run_id, qa_cfg.signal, qa_image_start_ns());
    qa_modules_changed();
    qa_timeline_start(0);
    qa_timeline_wake_with(wake_for_a_point);
    waiting_since_ns = qa_monotonic_ns();
    start_or_wait(qa_cfg.interval != 0 || attached, false);
}

/* How long the main thread waits for the writer to end: a dump under way is finished first. */
#define WRITER_END_WAIT_MS 5000

/* On the main thread, in pthread_exit: the writer ends and is gone from the kernel (so its count
 * in glibc is dropped) before the main thread goes on leaving. From then on the image is as one
 * whose writer has not started: the dump signal's handler writes its dumps, the allocating
 * threads take the timeline's points, and the control record says no writer runs (qaudit
 * snapshot then says to use the dump signal). */
void qa_writer_main_thread_leaving(void)
{
    if (atomic_exchange(&qa_writer_state.ended_for_good, true))
        return;
    qa_writer_state.stopped_at_ns = qa_now_ns();
    atomic_store(&qa_writer_waiting, true);
    qa_control_writer_state(QAUDIT_WRITER_FAILED);
    int tid = atomic_load(&writer_tid);
    if (tid == 0)
        return;
    atomic_fetch_add(&requests, 1); /* the futex word moves: the writer wakes and sees the end */
    qa_futex(&requests, FUTEX_WAKE, 1, NULL);
    for (int waited = 0; waited < WRITER_END_WAIT_MS; waited++) {
        /* the C library's syscall: the exported one is host/unwinder_fds.c's */
        if (qa_real.syscall_fn(SYS_tgkill, getpid(), tid, 0) != 0 && errno == ESRCH)
            return;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    qa_log("the dump writer did not end within %d ms of the main thread's pthread_exit: the "
           "process may outlive its last thread",
           WRITER_END_WAIT_MS);
}

extern int __cxa_atexit(void (*fn)(void *), void *arg, void *module);

static void dump_at_exit(void *arg)
{
    (void)arg;
    if (atomic_load(&qa_ready) == 2 && !qa_inert)
        qa_dump(QA_DUMP_EXIT);
}

/* exit() runs the atexit handlers, then the loader's _dl_fini, which runs each module's
 * destructors: this one before those of the libraries the preload was initialised after, whose
 * frees a dump written here would call leaks (GnuTLS's and p11-kit's in wget --version: 694
 * blocks). So this only registers the dump as one more exit handler: glibc runs a handler
 * registered while it runs them once the running one (_dl_fini) has returned, when every
 * destructor has run. No module is named, so no dlclose can remove it. */
__attribute__((destructor)) static void dump_after_destructors(void)
{
    if (__cxa_atexit(dump_at_exit, NULL, NULL) != 0)
        dump_at_exit(NULL);
}
