/* Definitions of the classes a binary only declares and none of its units defines, from the
 * DWARF of the C++ libraries it needs (needed_libs.h): g++ describes a class only where its
 * vtable is emitted (std::runtime_error: in libstdc++) and leaves explicitly instantiated
 * templates to the library that instantiates them (std::stringstream); clang leaves out the
 * definitions of such types too (std::string's _Alloc_hider). A library's DWARF is its own, its
 * separate debug file (build id, .gnu_debuglink, /usr/lib/debug), or the debug build of the same
 * library that Debian's -dbg packages install beside it in debug/ (libstdc++6-12-dbg:
 * /usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30). Libraries are listed and opened on the
 * first declaration not found in the binary, one by one until one defines it. */
#ifndef PROBE_LIBRARY_DEFS_H
#define PROBE_LIBRARY_DEFS_H

#include <elfutils/libdw.h>
#include <stdbool.h>

struct library_defs;

/* For the libraries binary needs (nothing is read yet); NULL when out of memory. */
struct library_defs *probe_library_defs_new(const char *binary);
void probe_library_defs_free(struct library_defs *libs);

/* The definition of the class declared by decl in one of the libraries, by qualified name. */
bool probe_library_defs_find(struct library_defs *libs, Dwarf_Die *decl, Dwarf_Die *def);

/* The file whose DWARF holds def when it is one of the libraries', else NULL. */
const char *probe_library_defs_source(const struct library_defs *libs, const Dwarf_Die *def);

#endif
