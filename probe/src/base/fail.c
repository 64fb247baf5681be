/* One line of error for the user, written one way (probe_base.h). */
#include "probe_base.h"

#include <stdarg.h>
#include <stdio.h>

void probe_fail(char *error, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, size, fmt, ap);
    va_end(ap);
    probe_one_line(error);
}

void probe_one_line(char *text)
{
    for (unsigned char *c = (unsigned char *)text; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            *c = '?';
}
