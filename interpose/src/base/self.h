/* The calling thread's record, its gate and the re-entrancy guard: what every slow path and
 * hook does first. Kept apart from base.h so that threads.c, which these functions call, does not
 * include them. Context: any thread; qa_self_if_registered in signal handlers. */
#ifndef QAUDIT_SELF_H
#define QAUDIT_SELF_H

#include "base.h"

_Static_assert(offsetof(struct qa_thread, gate) == 0, "gate is the record's first field");

/* The calling thread's record, registering it on its first call; NULL when it cannot be. */
static inline struct qa_thread *qa_self(void)
{
    if (__builtin_expect(qa_tls_thread() == NULL, 0))
        qa_tls_set(qa_thread_register());
    return qa_tls_thread();
}

/* Never registers: async-signal-safe. */
static inline struct qa_thread *qa_self_if_registered(void)
{
    return qa_tls_thread();
}

/* Sets the re-entrancy guard; returns whether it was set already, for qa_guard_restore. While
 * it is set, allocations (by libunwind, dladdr, pthread_create, the interposer) are forwarded
 * uncounted. */
static inline bool qa_guard(struct qa_thread *t)
{
    bool was = t->gate & QA_GATE_BUSY;
    t->gate |= QA_GATE_BUSY;
    return was;
}

static inline void qa_guard_restore(struct qa_thread *t, bool was)
{
    if (!was)
        t->gate &= ~(unsigned)QA_GATE_BUSY;
}

/* The thread to count for, the guard set, or NULL when this call must only be forwarded (the
 * guard was set: the interposer is allocating). Registers a new thread. */
static inline struct qa_thread *qa_enter(void)
{
    struct qa_thread *t = qa_self();
    if (t == NULL || qa_guard(t))
        return NULL;
    return t;
}

/* The end of an entered call: the guard it set comes off. */
static inline void qa_leave(struct qa_thread *t)
{
    qa_assert(t->gate & QA_GATE_BUSY);
    qa_guard_restore(t, false);
}

#endif
