/* Function definitions of every compile unit by linkage name, for what a type unit only holds a
 * copy of: gcc's type units copy a lambda's closure under a bare declaration of its function,
 * without the call operator's parameters or its siblings, which naming it takes; and by the
 * declaration they complete, for a closure clang puts under an empty function DIE, which only
 * its call operator's definition names. */
#ifndef PROBE_FUNCTION_DEFS_H
#define PROBE_FUNCTION_DEFS_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>

/* The definitions (with their bodies' DIEs: out-of-line, abstract or concrete instances) of the
 * function whose mangled name is linkage, in the file dw: how many (at most max are filled).
 * The index is built on the first call. */
size_t probe_function_definitions(Dwarf *dw, const char *linkage, Dwarf_Die *out, size_t max);

/* The definition (out-of-line or abstract instance) at the top of a compile unit or namespace
 * that completes declaration (by DW_AT_specification), in declaration's file. False when none.
 * The index is built on the first call. */
bool probe_function_definition_of(Dwarf_Die *declaration, Dwarf_Die *out);

/* Frees the indexes: call when the file is closed. */
void probe_function_defs_reset(void);

#endif
