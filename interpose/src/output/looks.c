/* A thread's look: every so many of its counted allocations (the countdown in records/counting.h
 * marks it QA_GATE_LOOK), its next allocation call looks whether the image's lazy writer
 * thread is due to start (output/writer.c) and, while no writer runs, takes the timeline's point
 * when one is due (records/timeline.c). Without it, a process in steady state (whose live bytes
 * never move a batch) started no writer and had no point between its start and its exit.
 * How many allocations to the next look: one for a thread's first LOOK_EACH_FIRST looks (a
 * process whose start is a burst of allocations and whose next allocation comes after its
 * first 100 ms, PostgreSQL's checkpointer, starts its writer then: no rate read from the burst
 * can tell that the next allocation is far off); then half the way to the next thing due (the
 * writer's start or the timeline's point) at the rate the thread allocated since its last look,
 * from 1 to LOOK_STEP_MAX, so that a thread allocating a million times a second looks every
 * LOOK_STEP_MAX. A look costs the call's slow path and about 160 instructions here, two clock
 * readings included (callgrind): a short-lived forked child's ten looks are a few thousand
 * instructions beside a fork's hundreds of microseconds. Once the writer runs, a look every
 * LOOK_STEP_RUNNING allocations only sees whether it still does (it ends for good at the main
 * thread's pthread_exit).
 * Context: the program's threads, in an allocation's slow path, outside the guard (the
 * writer's start and a timeline point take it themselves). */
#include "look_soon.h"
#include "output.h"

#define LOOK_EACH_FIRST 256
#define LOOK_STEP_MAX 8
#define LOOK_STEP_RUNNING 4096

/* How many allocations to the next look; next_due: when the next thing is due, UINT64_MAX for
 * nothing. */
static uint32_t next_step(struct qa_thread *t, uint64_t now, uint64_t next_due)
{
    uint64_t took = now - t->look_ns; /* what the last step's allocations took */
    uint64_t last = t->look_step ? t->look_step : 1;
    uint64_t step;
    if (next_due == UINT64_MAX)
        step = LOOK_STEP_RUNNING;
    else if (t->looks < LOOK_EACH_FIRST)
        step = 1;
    else if (next_due <= now) /* due but not done (a caller in the C library, a dump under way) */
        step = 2 * last;
    else if (took == 0)
        step = LOOK_STEP_MAX;
    else
        step = last * (next_due - now) / (2 * took);
    if (next_due != UINT64_MAX)
        step = step < 1 ? 1 : step > LOOK_STEP_MAX ? LOOK_STEP_MAX : step;
    t->look_ns = now;
    t->look_step = (uint32_t)step;
    t->looks += t->looks < LOOK_EACH_FIRST;
    return (uint32_t)step;
}

void qa_look(struct qa_thread *t, uintptr_t caller)
{
    t->gate &= ~(unsigned)QA_GATE_LOOK;
    if (qa_writer_due_now(caller))
        qa_writer_start_lazy();
    uint64_t now = qa_monotonic_ns();
    uint64_t next_due = UINT64_MAX;
    if (atomic_load_explicit(&qa_writer_waiting, memory_order_relaxed)) {
        qa_timeline_point_if_due(t, now);
        uint64_t start = qa_writer_due_at(), point = qa_timeline_due();
        next_due = start < point ? start : point;
    }
    t->look_left = next_step(t, now, next_due);
}

/* The first look at the thread's second allocation: its first marks it (qa_look_soon). */
void qa_look_new_owner(struct qa_thread *t)
{
    qa_writer_note_thread();
    qa_look_soon(t, 0);
}
