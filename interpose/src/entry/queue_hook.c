/* qaudit_hook: the function a server's qaudit/hooks.h calls for each queue and connection event
 * (weak and undefined in the server, defined here). Events before start-up are dropped; the rest
 * go to the queue records (records/queues.c). Context: the program's threads. */
#include "../records/records.h"
#include "entry.h"
#include "qaudit/hooks.h"

QA_EXPORT void qaudit_hook(const struct qaudit_event *ev)
{
    if (ev == NULL || !qa_is_ready() || qa_inert)
        return;
    qa_queue_event(ev);
}
