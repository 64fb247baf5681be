/* A failed check of the interposer's own invariants, in a -DQA_DEBUG build: one line written with
 * write(2) from a stack buffer to the program's stderr (no malloc, no stdio: the check may fail
 * inside malloc or a signal handler), then abort(). Context: any, signal handlers included; nothing
 * here allocates. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"

#ifdef QA_DEBUG
/* base/context.h's run-time state: the depth of the interposer's own signal handlers on this
 * thread, and whether this thread is the dump writer. */
__thread int qa_ctx_handler_depth __attribute__((tls_model("initial-exec")));
__thread bool qa_ctx_on_writer __attribute__((tls_model("initial-exec")));

static void append(char *line, size_t *len, size_t size, const char *text)
{
    size_t n = strlen(text);
    if (*len + n >= size)
        n = size - 1 - *len;
    memcpy(line + *len, text, n);
    *len += n;
}

void qa_assert_fail(const char *file, int line, const char *what)
{
    char text[512], number[24];
    size_t len = 0, digits = 0;
    char reversed[24];
    for (unsigned v = (unsigned)line; v > 0 || digits == 0; v /= 10)
        reversed[digits++] = (char)('0' + v % 10);
    for (size_t i = 0; i < digits; i++)
        number[i] = reversed[digits - 1 - i];
    number[digits] = '\0';
    append(text, &len, sizeof text, "qaudit: internal check failed at ");
    append(text, &len, sizeof text, file);
    append(text, &len, sizeof text, ":");
    append(text, &len, sizeof text, number);
    append(text, &len, sizeof text, ": ");
    append(text, &len, sizeof text, what);
    append(text, &len, sizeof text, "\n");
    qa_write_stderr(text, len);
    abort();
}
#endif
