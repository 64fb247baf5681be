/* The interposer's lines on stderr, and the guard every write of its own goes through: a program
 * whose stderr (or whatever descriptor) is a closed pipe must not be killed by a write of ours.
 * Context: any thread; qa_log formats into a stack buffer (vsnprintf, no malloc), signal handlers
 * log with qa_log_strings, which formats nothing. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

/* Blocks SIGPIPE around a write of the interposer's: such a write must never raise a signal for
 * the program. A SIGPIPE the write raised is taken back; one already pending stays. */
void qa_sigpipe_block(struct qa_sigpipe *g)
{
    sigset_t pending;
    sigemptyset(&g->pipe_only);
    sigaddset(&g->pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &g->pipe_only, &g->saved);
    sigpending(&pending);
    g->was_pending = sigismember(&pending, SIGPIPE);
}

void qa_sigpipe_restore(struct qa_sigpipe *g, bool raised)
{
    int saved_errno = errno;
    if (raised && !g->was_pending)
        sigtimedwait(&g->pipe_only, NULL, &(struct timespec){0, 0});
    pthread_sigmask(SIG_SETMASK, &g->saved, NULL);
    errno = saved_errno;
}

/* The program's stderr, at this moment: on the writer thread's own table, borrowed for the one
 * write (fd_table.c), so that a daemon that closed it is not kept holding a pipe. */
void qa_write_stderr(const char *text, size_t n)
{
    int fd = qa_fd_borrow(STDERR_FILENO);
    if (fd < 0)
        return;
    struct qa_sigpipe guard;
    qa_sigpipe_block(&guard);
    ssize_t written = write(fd, text, n);
    qa_sigpipe_restore(&guard, written < 0 && errno == EPIPE);
    qa_fd_return(fd);
}

/* One line on stderr, formatted without malloc (vsnprintf into a stack buffer). */
void qa_log(const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof line, "qaudit: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    int saved = errno;
    qa_write_stderr(line, (size_t)n);
    errno = saved;
}

/* The same line from plain strings (first, then each argument up to a NULL), formatted by hand:
 * what a signal handler logs (qa_log's vsnprintf is not async-signal-safe). Cut where qa_log
 * cuts: 510 bytes, then the newline. */
void qa_log_strings(const char *first, ...)
{
    char line[512];
    struct qa_text t;
    qa_text_begin(&t, line, sizeof line - 1);
    qa_text_add(&t, "qaudit: ");
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s != NULL; s = va_arg(ap, const char *))
        qa_text_add(&t, s);
    va_end(ap);
    line[t.len] = '\n';
    int saved = errno;
    qa_write_stderr(line, t.len + 1);
    errno = saved;
}
