/* Per-thread records: mapped on a thread's first counted call, linked into a list that dumps walk
 * without locks, and reused, never unmapped: a thread that exits leaves its record on a retired
 * list, and a later thread takes it over once the kernel says the old owner is gone. What each
 * part keeps in a record it sets up through the callbacks given to qa_threads_init.
 * Context: the slow path (a thread's first counted call), its key destructor at thread exit,
 * and the forked child's handler. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"

/* Every record ever mapped; a record is never unlinked, so a reader needs no lock. */
static _Atomic(struct qa_thread *) threads QA_FORK_STATE;
static atomic_uint_fast64_t records_mapped QA_FORK_STATE;

/* The key whose destructor retires a thread's record. glibc keeps the values of the first 32 keys
 * inside the thread descriptor; a later key's first pthread_setspecific callocs a second-level
 * block that glibc frees at thread exit through the interposed free, unguarded, which would count
 * a free of a block never counted. So only a key below 32 is used. */
enum { FIRST_KEY_BLOCK = 32 };
static pthread_key_t exit_key;
static bool exit_key_ready;

/* Records whose thread has run its key destructors, oldest first: the thread may still be
 * freeing (glibc releases its own per-thread memory later), so a record is reused only once the
 * kernel no longer knows its owner's tid. Guarded by a spin lock that holds the holder's tid. */
static struct qa_thread *retired_head QA_FORK_STATE, *retired_tail QA_FORK_STATE;
static atomic_int retired_holder QA_FORK_STATE;

/* How many retired records a registering thread asks the kernel about before mapping a new one:
 * the oldest have had the longest to finish exiting. */
enum { ADOPT_TRIES = 4 };

static int current_tid(void)
{
    return (int)gettid();
}

static bool tid_gone(int tid)
{
    return tgkill(getpid(), tid, 0) != 0 && errno == ESRCH;
}

/* Takes the retired list's lock; false when this very thread holds it (a signal handler's
 * allocation interrupted this thread's own registration): the caller then does without. A holder
 * that died holding it (cancelled asynchronously, or left from a signal handler) loses it. */
static bool lock_retired(int tid)
{
    for (unsigned spins = 1;; spins++) {
        int holder = 0;
        if (atomic_compare_exchange_weak_explicit(&retired_holder, &holder, tid,
                                                  memory_order_acquire, memory_order_relaxed))
            return true;
        if (holder == tid)
            return false;
        if (holder == 0)
            continue;
        if (spins % 64 == 0 && tid_gone(holder) &&
            atomic_compare_exchange_strong_explicit(&retired_holder, &holder, tid,
                                                    memory_order_acquire, memory_order_relaxed))
            return true;
        sched_yield(); /* another thread's few list operations and tgkill calls */
    }
}

static void unlock_retired(void)
{
    atomic_store_explicit(&retired_holder, 0, memory_order_release);
}

static void push_retired(struct qa_thread *t)
{
    t->retired_next = NULL;
    if (retired_tail != NULL)
        retired_tail->retired_next = t;
    else
        retired_head = t;
    retired_tail = t;
}

static struct qa_thread *pop_retired(void)
{
    struct qa_thread *t = retired_head;
    retired_head = t->retired_next;
    if (retired_head == NULL)
        retired_tail = NULL;
    t->retired_next = NULL;
    return t;
}

/* Proof that no code runs on the old owner any more: the kernel has released its tid. A tid still
 * alive (the thread is still exiting) or already reused by another thread only delays reuse. */
static bool owner_gone(const struct qa_thread *t)
{
    return tid_gone(t->owner_tid);
}

/* The key's destructor, run by glibc as the thread exits. The thread keeps its record in its
 * TLS and goes on counting into it until it is gone. */
static void retire(void *record)
{
    struct qa_thread *t = record;
    if (!lock_retired(current_tid()))
        return; /* cannot happen: this thread never takes the lock while it holds it */
    push_retired(t);
    unlock_retired();
}

/* A retired record whose owner is gone, or NULL. A record still in use goes to the back. */
static struct qa_thread *adopt(int tid)
{
    if (!lock_retired(tid))
        return NULL;
    struct qa_thread *found = NULL;
    for (int i = 0; i < ADOPT_TRIES && found == NULL && retired_head != NULL; i++) {
        struct qa_thread *t = pop_retired();
        if (owner_gone(t))
            found = t;
        else
            push_retired(t);
    }
    unlock_retired();
    return found;
}

static struct qa_thread_parts parts; /* what the records set up in each record */

static struct qa_thread *map_record(void)
{
    struct qa_thread *t = qa_mmap(sizeof *t);
    if (t == NULL)
        return NULL;
    uint64_t order = atomic_fetch_add(&records_mapped, 1);
    parts.new_record(t, order);
    struct qa_thread *head = atomic_load(&threads);
    do
        t->next = head;
    while (!atomic_compare_exchange_weak(&threads, &head, t));
    return t;
}

/* What belongs to the thread rather than to the record: the counters, histograms, site deltas
 * and the sampling countdown carry on; the state of the previous owner's calls does not. */
static void take_over(struct qa_thread *t, int tid)
{
    t->owner_tid = tid;
    t->gate = qa_fast_path ? 0 : QA_GATE_FULL;
    parts.new_owner(t);
}

/* Without the key, records of exited threads are never reused (each thread keeps its own). */
void qa_threads_init(const struct qa_thread_parts *with)
{
    parts = *with;
    if (pthread_key_create(&exit_key, retire) != 0) {
        qa_log("no pthread key is free: records of exited threads are not reused");
        return;
    }
    if (exit_key >= FIRST_KEY_BLOCK) {
        pthread_key_delete(exit_key);
        qa_log("no pthread key below %d is free: records of exited threads are not reused",
               FIRST_KEY_BLOCK);
        return;
    }
    exit_key_ready = true;
}

/* The calling thread's record: a retired one whose owner is gone, or a new one. Makes only
 * system calls: the caller is inside malloc, unguarded. */
struct qa_thread *qa_thread_register(void)
{
    qa_assert(qa_is_ready()); /* a registered thread may skip the readiness check */
    int saved = errno;
    int tid = current_tid();
    struct qa_thread *t = exit_key_ready ? adopt(tid) : NULL;
    if (t == NULL)
        t = map_record();
    if (t != NULL) {
        take_over(t, tid);
        /* A key below 32: stores into the thread descriptor, allocates nothing. A thread whose
         * first counted call comes after its key destructors have run (glibc frees nothing
         * through free() there that the thread did not allocate itself) is never retired. */
        if (exit_key_ready)
            pthread_setspecific(exit_key, t);
    }
    errno = saved;
    return t;
}

struct qa_thread *qa_threads_head(void)
{
    return atomic_load(&threads);
}

/* The child of a fork has one thread, the caller, under a new tid: the other records and the
 * retired list belong to the parent's threads (their counts are dropped, not reused), and the
 * list's lock may have been held by one of them. Returns the caller's record, the only one. */
struct qa_thread *qa_threads_reset_after_fork(void)
{
    retired_head = retired_tail = NULL;
    atomic_store(&retired_holder, 0);
    if (qa_tls_thread() == NULL) /* registers now if the thread had never counted */
        qa_tls_set(qa_thread_register());
    struct qa_thread *self = qa_tls_thread();
    if (self != NULL) {
        self->next = NULL;
        self->retired_next = NULL;
        /* A child's only thread has the process's id (gettid would be one more page of the C
         * library's code faulted in every child). */
        self->owner_tid = (int)getpid();
    }
    atomic_store(&threads, self);
    atomic_store(&records_mapped, 1);
    return self;
}
