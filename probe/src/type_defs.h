/* The definition of a C++ class that a unit only declares. GCC declares explicitly instantiated
 * templates (std::basic_ios<char>, std::string) and clang declares classes whose vtable another
 * unit emits, so a member or base of such a type has no size or layout in its own unit: its
 * definition is in another unit, found by qualified name as gdb finds it. */
#ifndef PROBE_TYPE_DEFS_H
#define PROBE_TYPE_DEFS_H

#include <elfutils/libdw.h>
#include <stdbool.h>

struct type_defs;

/* Definitions among the units of dw (their index is built on the first look-up). */
struct type_defs *probe_type_defs_new(Dwarf *dw);
void probe_type_defs_free(struct type_defs *defs);

/* The definition of the class declared by decl (a struct, class or union with
 * DW_AT_declaration): true with *def set when some unit defines a class of that qualified name. */
bool probe_type_defs_find(struct type_defs *defs, Dwarf_Die *decl, Dwarf_Die *def);

#endif
