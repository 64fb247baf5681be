/* How a DWARF type is spelled in a layout: a C abstract declarator, qualifiers included, with
 * the place a member's name takes in it. */
#ifndef PROBE_TYPE_NAMES_H
#define PROBE_TYPE_NAMES_H

#include <elfutils/libdw.h>
#include <stddef.h>

/* A malloc'd spelling of the type at die as a C abstract declarator ("unsigned int",
 * "const char *", "struct rx_desc[4]", "void (*)(int, void *)", "const char (*)[32]",
 * "ns::Queue<int, 1>"), or NULL when out of memory. When name_at is not NULL it receives the
 * offset at which a declared name goes: 4 in "char[3]" (char e[3]), 6 in "void (*)(int)". */
char *probe_type_decl(Dwarf_Die *die, size_t *name_at);

/* probe_type_decl without the name's place. */
char *probe_type_name(Dwarf_Die *die);

/* probe_type_name through typedefs ("int" for an int32_t), as a mangled name has the type: for
 * the parameters in a function's or a lambda's demangled name. */
char *probe_type_name_resolved(Dwarf_Die *die);

#endif
