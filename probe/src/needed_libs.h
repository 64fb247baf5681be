/* The shared libraries a binary needs (DT_NEEDED, and what those need in turn), found on disk as
 * the dynamic linker would find them: LD_LIBRARY_PATH, the binary's DT_RUNPATH (or DT_RPATH)
 * with $ORIGIN, the directories /etc/ld.so.conf.d names, then the system's. Only libraries that
 * export C++ symbols are kept: a class a C++ binary only declares (its vtable or its explicit
 * instantiation is in a library) is defined in one of those. */
#ifndef PROBE_NEEDED_LIBS_H
#define PROBE_NEEDED_LIBS_H

#include <stdbool.h>
#include <stddef.h>

struct needed_libs {
    char **paths; /* in breadth-first order of DT_NEEDED, each once */
    size_t count;
};

/* The C++ libraries binary needs into out (none when binary is no dynamic ELF file). False only
 * when out of memory. */
bool probe_needed_libs_find(const char *binary, struct needed_libs *out);
void probe_needed_libs_free(struct needed_libs *libs);

#endif
