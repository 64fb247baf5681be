/* Where a DIE's attributes end in its section: libdw steps over them inside dwarf_child and
 * dwarf_siblingof but does not say where, and a check of an empty list of children needs it; and
 * where a DIE's unit ends, which libdw keeps to itself. */
#ifndef PROBE_DIE_END_H
#define PROBE_DIE_END_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The address just past die's last attribute (where its children, or its next sibling, start),
 * or NULL when it cannot be told (a form of unknown size, DW_FORM_indirect, damage). */
const unsigned char *probe_die_attributes_end(Dwarf_Die *die);

/* The size of every value of form (the forms of DWARF 5, section 7.5.6, and GNU's), or
 * FORM_VARIABLE when each value tells its own (a string, a block, a LEB128 number), or
 * FORM_UNKNOWN (DW_FORM_indirect, a form no table holds). */
#define FORM_VARIABLE (-1)
#define FORM_UNKNOWN (-2)
int probe_form_fixed_size(unsigned form, uint8_t address_size, uint8_t offset_size);

/* The size of a value of form at p (the forms of DWARF 5, section 7.5.6, and GNU's), within
 * end; false for DW_FORM_indirect, a form no table holds, or a value that does not end before
 * end. (An implicit constant's is 0: it is in the abbreviation.) */
bool probe_form_size(unsigned form, const unsigned char *p, const unsigned char *end,
                     uint8_t address_size, uint8_t offset_size, size_t *size);

/* The offsets, in its section, of die's unit's abbreviation table and of the end of the unit (the
 * next unit's header); false when the unit's header cannot be read. */
bool probe_unit_bounds(Dwarf_Die *die, Dwarf_Off *abbrev, Dwarf_Off *end);

/* The address just past die's unit, in the same mapping as die->addr; NULL when the unit's
 * header cannot be read. */
const unsigned char *probe_unit_end(Dwarf_Die *die);

#endif
