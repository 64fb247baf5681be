/* Checking one abbreviation table (DWARF 5, section 7.5.3) from its bytes: known tags,
 * attributes and forms, each attribute in a form of its class and on a tag that has it, a children
 * flag of 0 or 1 and none on a tag that never has children, no C++ tag in a C unit. */
#ifndef PROBE_ABBREV_CHECK_H
#define PROBE_ABBREV_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* The language of the unit whose table it is, for what only some producers write: a C unit has
 * no C++ tag; Go's linker gives a function type a size (a func value's) and writes an
 * interface's typedef with a children flag (its list of children empty). */
enum abbrev_language { ABBREV_OTHER, ABBREV_C, ABBREV_GO };

/* NULL when the table that starts at start (and lies before end) is well formed up to its
 * closing null entry, else what is wrong: a constant string, or why (filled) for details. */
const char *probe_abbrev_table_problem(const unsigned char *start, const unsigned char *end,
                                       enum abbrev_language language, char *why, size_t size);

#endif
