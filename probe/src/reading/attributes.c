/* The DWARF attributes layouts are read from (probe_reading.h). */
#include "probe_reading.h"

#include <dwarf.h>

bool probe_udata(Dwarf_Die *die, unsigned name, Dwarf_Word *out)
{
    Dwarf_Attribute attr;
    return dwarf_attr_integrate(die, name, &attr) != NULL && dwarf_formudata(&attr, out) == 0;
}

/* DW_AT_data_member_location: a constant, or an expression that is one DW_OP_plus_uconst. */
bool probe_member_location(Dwarf_Die *die, Dwarf_Word *offset)
{
    Dwarf_Attribute attr;
    if (dwarf_attr(die, DW_AT_data_member_location, &attr) == NULL)
        return false;
    if (dwarf_formudata(&attr, offset) == 0)
        return true;
    Dwarf_Op *ops;
    size_t n;
    if (dwarf_getlocation(&attr, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst) {
        *offset = ops[0].number;
        return true;
    }
    return false;
}

/* With type units, a unit refers to a type defined elsewhere through a declaration carrying
 * DW_AT_signature: follow it to the definition. */
Dwarf_Die *probe_resolve_signature(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    Dwarf_Die target;
    if (dwarf_attr(die, DW_AT_signature, &attr) != NULL &&
        probe_checked_formref_die(&attr, &target))
        *die = target;
    return die;
}

Dwarf_Die *probe_type_of(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(die, DW_AT_type, &attr) == NULL ||
        !probe_checked_formref_die(&attr, out))
        return NULL;
    return probe_resolve_signature(out);
}
