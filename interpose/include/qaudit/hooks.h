/* qaudit hook ABI: how a server reports connection and queue events to the interposer.
 * Without libqaudit-preload the weak symbol and the attach slot (below) stay NULL and every hook
 * is two predictable branches on two loads (bench/RESULTS.md, issue 24: what the slot costs).
 * The same header serves C (C99 and later) and C++ (C++11 and later): its one symbol has C
 * linkage, so a C++ server calls the preload's qaudit_hook, not a mangled weak name nothing
 * defines. */
#ifndef QAUDIT_HOOKS_H
#define QAUDIT_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define QAUDIT_NULL_ nullptr /* (quiet under -Wzero-as-null-pointer-constant) */
#else
#define QAUDIT_NULL_ NULL
#endif

/* Bumped whenever struct qaudit_event or the meaning of an event changes. The interposer
 * refuses events whose abi field it does not know, and says so in its dump. */
#define QAUDIT_HOOKS_ABI 1

/* Compile the hooks out entirely with -DQAUDIT_HOOKS=0. */
#ifndef QAUDIT_HOOKS
#define QAUDIT_HOOKS 1
#endif

enum qaudit_event_kind {
    QAUDIT_CONN_OPEN = 1,      /* owner opened; queue is the queue it embeds */
    QAUDIT_CONN_CLOSE = 2,     /* owner closed; its queue has been cleared */
    QAUDIT_QUEUE_PUSH = 3,     /* depth after the push */
    QAUDIT_QUEUE_POP = 4,      /* depth after the pop */
    QAUDIT_QUEUE_GROW = 5,     /* storage grew to capacity */
    QAUDIT_QUEUE_SHRINK = 6,   /* heap storage halved to capacity */
    QAUDIT_QUEUE_INLINE = 7,   /* heap storage released, back to inline slots */
    QAUDIT_QUEUE_CLEAR = 8,    /* emptied; discarded says how many values were dropped */
    QAUDIT_QUEUE_MOVE = 9,     /* queue took other's values (other is now empty); discarded:
                                  values queue held before and dropped */
    QAUDIT_QUEUE_DESTROY = 10, /* storage released; discarded: values dropped */
    QAUDIT_QUEUE_ENTER = 11,   /* a cold path that may allocate starts; depth is the depth the
                                  queue has once it completes (so a grow on the 9th push says 9) */
    QAUDIT_QUEUE_LEAVE = 12,   /* that cold path ended; allocations since ENTER belong to queue */
};

struct qaudit_event {
    uint32_t abi;       /* QAUDIT_HOOKS_ABI of the emitter */
    uint32_t kind;      /* enum qaudit_event_kind */
    const void *owner;  /* the connection, for CONN_* events; NULL for queue events */
    const void *queue;  /* the queue the event is about */
    const void *other;  /* the moved-from queue, for QUEUE_MOVE */
    uint64_t depth;     /* values held after the operation */
    uint64_t capacity;  /* slots available after the operation */
    uint64_t discarded; /* values dropped without a pop (CLEAR, MOVE, DESTROY) */
};

/* Defined by libqaudit-preload.so (or by a test); weak and undefined everywhere else. */
extern void qaudit_hook(const struct qaudit_event *event) __attribute__((weak));

/* Header version 2 (the events' ABI above is unchanged): the hook `qaudit attach` fills in. A
 * server started without the preload bound qaudit_hook to NULL for good (a non-PIE one at link
 * time; a compiler may also keep the address, a constant to it, in a register across a loop), so
 * events after an attach go through this slot, read at each event. One per program: every file
 * that includes this header defines it weakly, the linker keeps one (and leaves the others'
 * bytes, which the attach fills in too); the magic, in initialised data, is how the attach finds
 * it in a stripped binary. */
#define QAUDIT_HOOK_SLOT_MAGIC "qaudit-hook-v2"
struct qaudit_hook_slot {
    char magic[16]; /* QAUDIT_HOOK_SLOT_MAGIC, NUL-padded */
    void (*volatile hook)(const struct qaudit_event *event); /* NULL until an attach */
};
__attribute__((weak, aligned(16))) struct qaudit_hook_slot qaudit_hook_slot = {
    QAUDIT_HOOK_SLOT_MAGIC, QAUDIT_NULL_};

#if QAUDIT_HOOKS
static inline void qaudit_emit(enum qaudit_event_kind kind, const void *owner, const void *queue,
                               const void *other, uint64_t depth, uint64_t capacity,
                               uint64_t discarded)
{
    void (*hook)(const struct qaudit_event *) = qaudit_hook;
    if (__builtin_expect(hook == QAUDIT_NULL_, 1)) {
        hook = qaudit_hook_slot.hook; /* volatile: read at each event */
        if (__builtin_expect(hook == QAUDIT_NULL_, 1))
            return;
    }
    /* In field order (C++ has designated initializers only from C++20; no cast, which C++'s
     * -Wold-style-cast would flag: the kinds fit in 32 bits). */
    struct qaudit_event event = {
        QAUDIT_HOOKS_ABI, kind, owner, queue, other, depth, capacity, discarded,
    };
    hook(&event);
}
#else
static inline void qaudit_emit(enum qaudit_event_kind kind, const void *owner, const void *queue,
                               const void *other, uint64_t depth, uint64_t capacity,
                               uint64_t discarded)
{
    (void)kind, (void)owner, (void)queue, (void)other, (void)depth, (void)capacity, (void)discarded;
}
#endif

static inline void qaudit_conn_open(const void *conn, const void *queue)
{
    qaudit_emit(QAUDIT_CONN_OPEN, conn, queue, QAUDIT_NULL_, 0, 0, 0);
}

static inline void qaudit_conn_close(const void *conn, const void *queue)
{
    qaudit_emit(QAUDIT_CONN_CLOSE, conn, queue, QAUDIT_NULL_, 0, 0, 0);
}

#undef QAUDIT_NULL_

#ifdef __cplusplus
}
#endif

#endif
