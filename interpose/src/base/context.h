/* The contexts a function may run in, carried by its declaration, so that `grep` answers "what
 * may a signal handler call" (grep QA_CTX_SIGNAL_SAFE) or "what runs on the fast path". The
 * macros are empty: the tag is for the reader, and the -DQA_DEBUG build checks what can be
 * checked at run time (base/assert.h): a per-thread depth of the interposer's own signal
 * handlers (host/signals.c), and a flag on the dump writer's thread (output/writer.c).
 *   QA_CTX_FAST         the malloc fast path: no lock, no system call, no allocation, inline
 *                       where it can be (records/counting.h)
 *   QA_CTX_SIGNAL_SAFE  may run inside a signal handler (a fatal signal's dump, _exit's):
 *                       async-signal-safe only (no malloc, stdio, snprintf, strerror), no lock
 *                       but the dump lock, taken for a bounded time (base/json.c's rule)
 *   QA_CTX_WRITER       the writer thread, or an ordinary dump on any thread outside a handler:
 *                       may wait for the loader's lock, read /proc, open files
 * Context: a header of definitions only; the debug state is per thread (initial-exec TLS). */
#ifndef QAUDIT_CONTEXT_H
#define QAUDIT_CONTEXT_H

#include <stdbool.h>

#include "assert.h"

#define QA_CTX_FAST
#define QA_CTX_SIGNAL_SAFE
#define QA_CTX_WRITER

#ifdef QA_DEBUG
extern __thread int qa_ctx_handler_depth __attribute__((tls_model("initial-exec")));
extern __thread bool qa_ctx_on_writer __attribute__((tls_model("initial-exec")));
/* Around the body of each of the interposer's own signal handlers. */
static inline void qa_ctx_handler_enter(void)
{
    qa_ctx_handler_depth++;
}
static inline void qa_ctx_handler_leave(void)
{
    qa_assert(qa_ctx_handler_depth > 0);
    qa_ctx_handler_depth--;
}
/* Once, at the top of the writer thread. */
static inline void qa_ctx_writer_thread(void)
{
    qa_ctx_on_writer = true;
}
/* What may not run inside a handler (qa_dump: the loader's lock, /proc); what runs only on the
 * writer thread. */
#define qa_assert_not_in_handler() qa_assert(qa_ctx_handler_depth == 0)
#define qa_assert_on_writer() qa_assert(qa_ctx_on_writer)
#else
static inline void qa_ctx_handler_enter(void) {}
static inline void qa_ctx_handler_leave(void) {}
static inline void qa_ctx_writer_thread(void) {}
#define qa_assert_not_in_handler() ((void)0)
#define qa_assert_on_writer() ((void)0)
#endif

#endif
