/* Matching --type names to the names of types: with or without their namespaces and enclosing
 * classes, with any spacing inside template arguments, and with '*' and '?' globs. */
#ifndef PROBE_TYPE_MATCH_H
#define PROBE_TYPE_MATCH_H

#include <stdbool.h>

/* True when pattern names name: "Pair2<int, 3>", "lc::Pair2<int,3>" and "Pair2<int,*>" all
 * name "lc::Pair2<int, 3>". A pattern without a scope matches the name's last components
 * ("Inner" and "Outer::Inner" name "lc::Outer::Inner"), never part of a component. */
bool type_name_matches(const char *pattern, const char *name);

/* True when pattern is a glob ('*' or '?'). */
bool type_pattern_is_glob(const char *pattern);

#endif
