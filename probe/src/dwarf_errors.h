/* Corrupt DWARF found while reading: libdw answers -1 or NULL where the data is damaged (a bad
 * abbreviation, a reference outside its unit, a string offset outside .debug_str), which a walk
 * would otherwise take for "no more children" or "no such attribute". The checked calls below
 * answer as libdw does and also keep the first such failure, per thread, for the reader to
 * report. */
#ifndef PROBE_DWARF_ERRORS_H
#define PROBE_DWARF_ERRORS_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>

/* Forgets any recorded failure, and starts a new read (read_generation.h): call before a read. */
void probe_dwarf_errors_reset(void);

/* Frees what the checks kept about the walk (the failure itself stays): call after a read. */
void probe_dwarf_errors_release(void);

/* The first failure recorded since the reset ("corrupt DWARF at DIE 0x2f: invalid DWARF"), or
 * NULL. */
const char *probe_dwarf_errors_first(void);

/* Records "corrupt DWARF at DIE <offset of die>: what" unless a failure is already recorded. */
void probe_dwarf_errors_note(Dwarf_Die *die, const char *what);

/* Records that the split unit of a skeleton (-gsplit-dwarf) was not found: its .dwo is named. */
void probe_dwarf_errors_missing_dwo(Dwarf_Die *skeleton);

/* dwarf_child, and a failure when libdw fails (a bad abbreviation) or the child is a unit's top
 * DIE (then 1, no children). */
int probe_checked_child(Dwarf_Die *die, Dwarf_Die *result);

/* dwarf_siblingof, and a failure when libdw fails, when the unit ends before the list the DIE
 * belongs to does (its terminating null entry is missing: a cut or mislabelled unit), or when
 * the sibling is a unit's top DIE (then 1, no sibling). */
int probe_checked_siblingof(Dwarf_Die *die, Dwarf_Die *result);

/* probe_checked_siblingof for a walk that reads lists of children to their end. The next DIE is
 * found from die's bytes (die_scan.h: by its DW_AT_sibling, else past its children), libdw's
 * step only where they cannot be read; children_end: NULL, or the null entry that closed die's
 * children (as *end gave it at the last of them), which saves reading them again. At the end of
 * die's list (1), *end (unless end is NULL) is the null entry that closed it; else NULL. */
int probe_checked_next(Dwarf_Die *die, const void *children_end, Dwarf_Die *result,
                       const void **end);

/* The null entry (its addr and cu only) that ended the children of unit cu's top DIE, when a
 * walk of them with probe_checked_child and probe_checked_siblingof got there since the reset;
 * false otherwise. */
bool probe_dwarf_errors_top_end(Dwarf_CU *cu, Dwarf_Die *end);

/* dwarf_formref_die, and a failure when the reference cannot be followed (outside its unit or
 * section, or a type signature no unit has) or when a DW_AT_type or DW_AT_signature leads to a
 * DIE that is not a type (a reference into the middle of a DIE); NULL then. */
Dwarf_Die *probe_checked_formref_die(Dwarf_Attribute *attr, Dwarf_Die *result);

/* dwarf_peel_type for the type of an object (a member, an array element, a base class), and a
 * failure when libdw fails (a broken reference in the chain), the chain ends in void, or the
 * type reached is a base type without a size or with one no ABI has (a 13-byte int). */
int probe_checked_peel_type(Dwarf_Die *die, Dwarf_Die *result);

/* Records a failure when child, of tag tag, is a DIE a struct, class or union cannot hold in its
 * unit's language: in C members and the unnamed types clang nests, in C++ also bases, methods,
 * static members, template parameters and any type; anything in other languages. Also when a
 * member or base has no DW_AT_type. */
void probe_checked_aggregate_child(Dwarf_Die *child, int tag);

/* dwarf_diename, and a failure when die has a name that cannot be read (a string offset outside
 * its section) or is empty. */
const char *probe_checked_diename(Dwarf_Die *die);

#endif
