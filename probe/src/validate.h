/* Whether a layout read may be trusted: libdw met no corrupt DWARF on the way (dwarf_errors.h),
 * and every type read is one a compiler can produce. A damaged size or offset is often still
 * well-formed DWARF, so the second check catches what libdw cannot. */
#ifndef PROBE_VALIDATE_H
#define PROBE_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "probe/layout.h"

/* False, with "binary: what is wrong" (one line) in error, when the read met corrupt DWARF or a
 * type has a member past its end, a bit-field past its end, or two data members overlapping
 * outside a union. */
bool probe_layout_checked(const struct layout_set *set, char *error, size_t size);

/* The same test on one type: NULL when it is a possible layout, else what is wrong, written to
 * why. */
const char *probe_layout_type_problem(const struct layout_type *t, char *why, size_t size);

#endif
