/* The canonical own name of a C++ class, enum or typedef DIE (cxx_names.h), its template
 * arguments completed from the DIE's template parameters where the producer's name lacks what
 * the demangler writes: g++ leaves an integer argument's type out ("array<int, 3>" for the
 * demangler's "array<int, 3ul>"), clang writes an enumerator's name ("Val<ea>" for "Val<(E)0>"),
 * and each writes a lambda its own way ("<lambda(int)>", "(lambda at f.cc:3:4)"). */
#ifndef PROBE_TEMPLATE_ARGS_H
#define PROBE_TEMPLATE_ARGS_H

#include <elfutils/libdw.h>

#include "type_names.h" /* probe_name_of */

/* raw is the DIE's own name (DW_AT_name); a malloc'd canonical spelling, the classes and
 * enumerations of its arguments named by name_of (type_names.h); NULL when out of memory. */
char *probe_template_args_canonical(Dwarf_Die *die, const char *raw, probe_name_of name_of);

#endif
