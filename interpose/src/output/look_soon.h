/* A thread's next allocation looks (output/looks.c), as its first look, since since_ns: a new
 * owner's thread (looks.c) and the forked child's own (writer.c). A header of its own, below both,
 * so that writer.c, which looks.c calls, calls nothing back in looks.c.
 * Context: the thread's record with its owner (a new owner's, or the fork's child). */
#ifndef QAUDIT_OUTPUT_LOOK_SOON_H
#define QAUDIT_OUTPUT_LOOK_SOON_H

#include "../records/records.h"

static inline void qa_look_soon(struct qa_thread *t, uint64_t since_ns)
{
    t->look_left = 1;
    t->look_step = 1;
    t->look_ns = since_ns;
    t->looks = 0;
}

#endif
