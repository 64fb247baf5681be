/* Growable arrays for the tools: capacity doubling with overflow checks (common/grow_array.h). */
#include "common/grow_array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { FIRST_CAPACITY = 8 };

bool array_reserve(void *items, size_t *capacity, size_t needed, size_t size)
{
    void **array = items;
    if (needed <= *capacity)
        return true;
    if (size == 0)
        return false;
    size_t more = *capacity ? *capacity : FIRST_CAPACITY;
    while (more < needed) {
        if (more > SIZE_MAX / 2)
            return false;
        more *= 2;
    }
    if (more > SIZE_MAX / size)
        return false;
    void *grown = realloc(*array, more * size);
    if (grown == NULL)
        return false;
    *array = grown;
    *capacity = more;
    return true;
}

void *array_push(void *items, size_t *count, size_t *capacity, size_t size)
{
    void **array = items;
    if (*count == SIZE_MAX || !array_reserve(items, capacity, *count + 1, size))
        return NULL;
    char *item = (char *)*array + (*count)++ * size;
    memset(item, 0, size);
    return item;
}
