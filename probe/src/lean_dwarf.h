/* Opening a file's own DWARF without the sections layouts never read. libdw decompresses every
 * debug section it knows when it opens a file; on a -gz debug file that is most of the time of a
 * full layout dump, spent on line tables and location lists. */
#ifndef PROBE_LEAN_DWARF_H
#define PROBE_LEAN_DWARF_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>

struct lean_dwarf {
    Dwarf *dwarf;
    Elf *elf;
    void *map;
    size_t size;
};

/* Opens path's own DWARF over a private copy-on-write mapping in which the unread sections are
 * renamed. False (nothing to close) when path is not an ELF file with .debug_info of its own, or
 * is an object file (.o) whose DWARF needs relocating: the caller then goes through libdwfl,
 * which also finds separate debug files and relocates. */
bool probe_lean_dwarf_open(const char *path, struct lean_dwarf *out);
void probe_lean_dwarf_close(struct lean_dwarf *d);

#endif
