/* How a DWARF type is spelled in a layout: C and C++ syntax, qualifiers included. */
#ifndef PROBE_TYPE_NAMES_H
#define PROBE_TYPE_NAMES_H

#include <elfutils/libdw.h>

/* A malloc'd spelling of the type at die ("unsigned int", "const char *", "struct rx_desc[4]",
 * "_Atomic int", "ns::Queue<int, 1>"), or NULL when out of memory. */
char *probe_type_name(Dwarf_Die *die);

#endif
