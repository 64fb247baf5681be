/* Helpers shared by the reports sources (not part of the public headers). */
#ifndef REPORTS_INTERNAL_H
#define REPORTS_INTERNAL_H

#include <stddef.h>

#include "reports/report.h"

/* Appends one zeroed element to *items (count elements of size bytes) and returns it; NULL when
 * memory ran out (the array is then unchanged). */
void *push_item(void *items, size_t *count, size_t size);

/* strdup that maps NULL to NULL. */
char *copy_string(const char *s);

void locations_free(struct report_location *locations, size_t count);
void stack_free(struct report_stack *stack);
/* A deep copy of stack, modules remapped through module_map (NULL: kept). */
struct report_stack stack_copy(const struct report_stack *stack, const uint32_t *module_map);

/* Adds a single dump (already read) into the merged report; module indices are remapped. */
void report_merge_one(struct report *into, const struct report *dump);
/* Reads one dump into a fresh report; REPORT_INPUT_ERROR with error set on a bad dump. */
enum report_status dump_read(const char *path, struct report *out, char *error, size_t size);

#endif
