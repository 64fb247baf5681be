/* A double as the dump writes it (%.6g: per-connection averages), apart from base/json.c so that
 * the one printf-family call a fatal signal's dump makes is in a file of its own: the one reviewed
 * exception to "no printf in a signal handler" (base/context.h), which
 * interpose/tests/handler_link.sh checks for every other file. glibc formats %.6g of a finite
 * double in a stack buffer, without malloc or locks.
 * Context: whatever writes a dump, fatal signal handlers included (async-signal-safe as above). */
#include <stdio.h>

#include "base.h"

size_t qa_double_text(char *out, size_t size, double v)
{
    int n = snprintf(out, size, "%.6g", v);
    return n < 0 ? 0 : (size_t)n;
}
