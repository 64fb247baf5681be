/* Checks of a whole unit that libdw leaves undone, made after the reader walked it: its
 * abbreviation table holds only known tags, attributes and forms, each attribute in a form of
 * its class; and its DIEs end where the unit does (a damaged abbreviation or sibling reference
 * makes libdw end the walk early, silently, and the rest of the unit would go unread). */
#ifndef PROBE_UNIT_CHECK_H
#define PROBE_UNIT_CHECK_H

#include <elfutils/libdw.h>

/* Records the first problem of the unit whose top DIE is root (dwarf_errors.h). Call right after
 * walking the unit: root's children with probe_checked_child and probe_checked_siblingof, to their
 * end. */
void probe_unit_check(Dwarf_Die *root);

#endif
