/* qaudit_writer_start: what `qaudit snapshot` calls, through ptrace, in a forked child whose dump
 * writer has not started yet (a child starts it lazily, output/writer.c): without it, a child
 * that never allocates again would never serve the request. Returns 0 when the writer runs (now
 * or before), -EAGAIN when it cannot start, -ENOSYS in an image the preload does not count.
 * Context: one of the program's threads, borrowed by the command while it was blocked in a
 * system call and every other one is stopped. */
#include <errno.h>

#include "../output/output.h"
#include "entry.h"

QA_EXPORT int qaudit_writer_start(void)
{
    if (!qa_is_ready() || qa_inert)
        return -ENOSYS;
    return qa_writer_start_lazy();
}
