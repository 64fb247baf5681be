/* Lists grown one item at a time, and strings copied: what every room of the reports library
 * builds its lists with. A leaf: it calls only the C library. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports_base.h"

void *report_push_item(void *items, size_t *count, size_t size)
{
    void **array = items;
    char *grown = realloc(*array, (*count + 1) * size);
    if (grown == NULL)
        return NULL;
    *array = grown;
    memset(grown + *count * size, 0, size);
    return grown + (*count)++ * size;
}

char *report_copy_string(const char *s)
{
    return s ? strdup(s) : NULL;
}

void report_push_string(char ***list, size_t *count, const char *fmt, ...)
{
    char **slot = report_push_item(list, count, sizeof *slot);
    if (slot == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(slot, fmt, ap) < 0)
        *slot = NULL;
    va_end(ap);
}
