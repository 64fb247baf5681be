/* Qualified names of C++ types as gdb spells them ("lc::Outer::Inner", "(anonymous namespace)::S",
 * "f()::Local"), shared by the layout walk (names of the types it reads) and the type spellings
 * (names of the types members refer to). libdw has no parent links, so each unit's scopes are
 * indexed once, in one walk, and names are cached per DIE. */
#ifndef PROBE_SCOPE_NAMES_H
#define PROBE_SCOPE_NAMES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>

#include "type_names.h" /* struct scope_name */

/* The name of a struct, class, union, enum, typedef or namespace DIE: qualified with its
 * enclosing namespaces, classes and functions in C++ (the scopes of a definition given by
 * DW_AT_specification are those of its declaration, as GCC's type units have it), plain in C.
 * False only when out of memory. */
bool probe_scope_name_of(Dwarf_Die *die, struct scope_name *out);

/* The struct, class and union DIEs (declarations included) and typedefs of the unit whose root
 * DIE is root, in DWARF order: those at its top, in namespaces, nested in classes, and in C++
 * also those local to functions. The array stays valid until the next call or the reset. False
 * when out of memory. */
bool probe_scope_unit_types(Dwarf_Die *root, const Dwarf_Die **types, size_t *count);

/* probe_spell_type (type_names.h) naming what it meets as probe_scope_name_of does: a member's
 * type as a layout spells it. */
char *probe_type_decl(Dwarf_Die *die, size_t *name_at);

/* Frees every index and name: call when the Dwarf handles they point into are closed. */
void probe_scope_names_reset(void);

#endif
