/* Strings copied, and lists of formatted strings grown one at a time (common/grow_array.h, as
 * every list of the reports library grows). A leaf: it calls only the C library and
 * common/grow_array.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "reports_base.h"

char *report_copy_string(const char *s)
{
    return s ? strdup(s) : NULL;
}

void report_push_string(char ***list, size_t *count, size_t *capacity, const char *fmt, ...)
{
    char **slot = array_push(list, count, capacity, sizeof *slot);
    if (slot == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(slot, fmt, ap) < 0)
        *slot = NULL;
    va_end(ap);
}
