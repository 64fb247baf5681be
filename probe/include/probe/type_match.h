/* Matching --type names to the names of types: with or without their namespaces and enclosing
 * classes, in any spelling of a C++ name gdb or the demangler takes ("std::map<const char*,int>"
 * names "std::map<char const*, int>", "Val<500>" and "Val<500UL>" name "Val<500ul>"), through a
 * typedef ("std::string"), and with '*' and '?' globs (matched against names as printed). */
#ifndef PROBE_TYPE_MATCH_H
#define PROBE_TYPE_MATCH_H

#include <stdbool.h>

#include "probe/layout.h"

/* True when pattern names name: "Pair2<int, 3>", "lc::Pair2<int,3>" and "Pair2<int,*>" all
 * name "lc::Pair2<int, 3>". A pattern without a scope matches the name's last components
 * ("Inner" and "Outer::Inner" name "lc::Outer::Inner"), never part of a component. */
bool layout_type_name_matches(const char *pattern, const char *name);

/* layout_type_name_matches, or pattern names a typedef of t that the read recorded (set->aliases).
 */
bool layout_type_matches(const struct layout_set *set, const struct layout_type *t,
                         const char *pattern);

#endif
