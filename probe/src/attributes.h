/* The DWARF attributes layouts are read from, as the measures, the C++ bases and the spellings of
 * types all read them: a constant, a member's offset, the type a DIE refers to, and the definition
 * a type unit's declaration stands for. Through the checked calls (dwarf_errors.h), so that a
 * broken reference is reported, not taken for an absent one. */
#ifndef PROBE_ATTRIBUTES_H
#define PROBE_ATTRIBUTES_H

#include <elfutils/libdw.h>
#include <stdbool.h>

/* The attribute name of die (or of the declaration it completes) as an unsigned constant. */
bool probe_udata(Dwarf_Die *die, unsigned name, Dwarf_Word *out);

/* DW_AT_data_member_location: a constant, or an expression that is one DW_OP_plus_uconst. */
bool probe_member_location(Dwarf_Die *die, Dwarf_Word *offset);

/* die itself, or, when it is a type unit's declaration (DW_AT_signature), the definition. */
Dwarf_Die *probe_resolve_signature(Dwarf_Die *die);

/* The type die refers to (DW_AT_type, also through the declaration it completes), resolved as
 * probe_resolve_signature does, in out; NULL when it has none or the reference is broken. */
Dwarf_Die *probe_type_of(Dwarf_Die *die, Dwarf_Die *out);

#endif
