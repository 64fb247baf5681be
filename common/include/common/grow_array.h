/* Growable arrays for the tools (cli, probe, reports; never the interposer, which allocates
 * nothing through the program's allocator): one place that doubles a capacity, checks the
 * multiplication for overflow and leaves the array untouched when memory runs out. */
#ifndef COMMON_GROW_ARRAY_H
#define COMMON_GROW_ARRAY_H

#include <stdbool.h>
#include <stddef.h>

/* Makes *items (an array of *capacity elements of size bytes) hold at least needed elements:
 * the capacity doubles, from 8, until it does. New slots are not initialised. False, with the
 * array and *capacity unchanged, when the size overflows or memory ran out. */
bool array_reserve(void *items, size_t *capacity, size_t needed, size_t size);

/* Appends one zeroed element (*count grows by one) and returns it; NULL, with the array
 * unchanged, when memory ran out. items is the address of the array's pointer. */
void *array_push(void *items, size_t *count, size_t *capacity, size_t size);

#endif
