/* How a DWARF type is spelled in a layout: a C abstract declarator, qualifiers included, with
 * the place a member's name takes in it. */
#ifndef PROBE_TYPE_NAMES_H
#define PROBE_TYPE_NAMES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>

/* The name of a struct, class, union, enum, typedef or namespace DIE. */
struct scope_name {
    const char *name; /* valid until probe_scope_names_reset; NULL for an unnamed type */
    bool unit_local;  /* in an anonymous namespace or a function of internal linkage: the
                         same name in another unit is another type */
};

/* How a spelling names the classes, enums and typedefs it meets: probe_scope_name_of
 * (scope_names.h), handed in. The two are made of each other (a local class's name holds its
 * function's parameter types, a template instance's its arguments, and a type is spelled with
 * the names of its classes); handing the namer down keeps scope_names.c above this file instead
 * of the two calling each other, as members.c hands its reader to virtual_bases.c. */
typedef bool (*probe_name_of)(Dwarf_Die *die, struct scope_name *out);

/* A malloc'd spelling of the type at die as a C abstract declarator ("unsigned int",
 * "const char *", "struct rx_desc[4]", "void (*)(int, void *)", "const char (*)[32]",
 * "ns::Queue<int, 1>"), or NULL when out of memory. When name_at is not NULL it receives the
 * offset at which a declared name goes: 4 in "char[3]" (char e[3]), 6 in "void (*)(int)". */
char *probe_spell_type(Dwarf_Die *die, size_t *name_at, probe_name_of name_of);

/* probe_spell_type through typedefs ("int" for an int32_t), without the name's place, as a
 * mangled name has the type: for the parameters in a function's or a lambda's demangled name,
 * and a template's type arguments. */
char *probe_spell_type_resolved(Dwarf_Die *die, probe_name_of name_of);

#endif
