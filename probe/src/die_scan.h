/* Scans of a unit's DIEs from their bytes: libdw looks each DIE's abbreviation up in a hash table
 * under a lock, and dwarf_siblingof reads every DIE below one that has no DW_AT_sibling (clang
 * writes none) to step over it; a scan looks each abbreviation up once per unit and jumps by
 * DW_AT_sibling where there is one. For the index built ahead of the layout walk (type_defs.c),
 * and for the walk's steps over children it does not read (dwarf_errors.c). A scan checks
 * nothing: where it cannot read, libdw reads, and the checked calls say what is wrong. */
#ifndef PROBE_DIE_SCAN_H
#define PROBE_DIE_SCAN_H

#include <elfutils/libdw.h>
#include <stdbool.h>

struct die_scanned {
    Dwarf_Die die; /* its addr, cu and abbrev (as libdw would fill them) */
    int tag;
    bool declaration; /* it has DW_AT_declaration */
    bool named;       /* it has DW_AT_name */
};

enum die_scan_result {
    DIE_SCAN_DONE,
    DIE_SCAN_STOPPED,    /* visit said to stop */
    DIE_SCAN_UNREADABLE, /* a form of no known size (DW_FORM_indirect), an unknown
                            abbreviation, a value past the unit's end: read it with libdw */
};

/* What a visit answers: */
enum die_scan_step {
    DIE_SCAN_OVER, /* go on past its children */
    DIE_SCAN_INTO, /* visit its children next */
    DIE_SCAN_STOP, /* end the scan */
};

/* Calls visit for the children of root (a unit's top DIE), in DWARF order, and for their children
 * where visit asks for them. */
enum die_scan_result
probe_die_scan(Dwarf_Die *root,
               enum die_scan_step (*visit)(const struct die_scanned *die, void *arg), void *arg);

/* The address right after die and its children (where its next sibling is, or the null entry that
 * ends its list): where its DW_AT_sibling leads when it has one (as libdw steps), else right
 * after children_end when given (the null entry that closed its children, as a walk of them
 * found it), else past its children as a scan finds them. NULL when the scan cannot read die or
 * its children (or the unit ends first), or its DW_AT_sibling leads back into it. */
const void *probe_die_after(Dwarf_Die *die, const void *children_end);

/* Sets die->abbrev (when NULL) to its abbreviation, as libdw's look-up would, from the scans'
 * table of its unit; left NULL when the scan cannot read the code. */
void probe_die_known_abbrev(Dwarf_Die *die);

/* The address just past die's unit, from the scans' table of it (kept for the units used last);
 * NULL when the unit's header cannot be read. */
const void *probe_die_unit_end(Dwarf_Die *die);

/* Frees the tables of the units scanned last (call after a read). */
void probe_die_scan_release(void);

#endif
