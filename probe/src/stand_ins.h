/* What a type unit only stands for or copies, found in the compile units. The stand-in of a
 * type-unit type: the declaration with DW_AT_signature a compile unit puts where the type
 * belongs; clang's type units put a type local to a function under an empty DW_TAG_subprogram,
 * and a lambda's closure without its call operator: what names them (the function, the
 * operator's parameters) is only at the stand-in. The original of a copy: g++'s type units copy
 * a class local to a function (a closure too) under a bare declaration of the function, without
 * its parameters, its class or its linkage name; the original is the class the compile units
 * have at the same place in the source. */
#ifndef PROBE_STAND_INS_H
#define PROBE_STAND_INS_H

#include <elfutils/libdw.h>
#include <stdbool.h>

/* A stand-in of type (a DIE of a type unit) in a compile unit of the same file. The index is
 * built on the first call, by one walk of every compile unit's DIEs. */
bool probe_stand_in_of(Dwarf_Die *type, Dwarf_Die *out);

/* The class local to a function in a compile unit of the same file that copy (a DIE of a type
 * unit) copies: one class with its line, column, name and size; false when none or several. */
bool probe_original_of_copy(Dwarf_Die *copy, Dwarf_Die *out);

/* Frees the index: call when the file is closed. */
void probe_stand_ins_reset(void);

#endif
