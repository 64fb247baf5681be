/* Reading a DWARF 5 name index (.debug_names, DWARF 5 section 6.1.1: clang -gpubnames, lld,
 * gdb-add-index -dwarf-5): which units define a struct, class or union of a given name. libdw
 * has no reader for it, hence this one. Unlike .gdb_index it lists every defining unit, so a
 * lookup through it still sees ODR conflicts. */
#ifndef PROBE_DEBUG_NAMES_H
#define PROBE_DEBUG_NAMES_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

/* The offsets of the unit headers of the units (compile units and local type units) that the
 * index of the file dw was read from names as defining a struct, class or union called
 * names[i], for every i, at most max of them. A name is looked up as given and by its last
 * component ("Inner" of "lc::Outer::Inner", as producers index nested names). 0 (read every
 * unit) when the file has no such index, a name is a glob or absent from it, an entry is in a
 * foreign type unit (split DWARF) or the index is damaged. */
size_t probe_debug_names_units(Dwarf *dw, const char *const *names, size_t count, uint64_t *units,
                               size_t max);

#endif
