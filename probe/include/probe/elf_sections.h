/* Opening an ELF file and finding its sections by name, for the parts that read ELF files
 * without DWARF: qaudit run judges the program it is asked to start (its interpreter, machine,
 * .note.go.buildid), the reports read build ids and notes. The probe's readers look their
 * sections up the same way (src/reading/elf_sections.c). */
#ifndef PROBE_PUBLIC_ELF_SECTIONS_H
#define PROBE_PUBLIC_ELF_SECTIONS_H

#include <gelf.h>
#include <stdbool.h>

/* The ELF file at path, opened for reading: *fd is to be closed by probe_elf_close. NULL when it
 * is no regular file, cannot be read, or is not ELF (a script); *fd is then -1, and *exists (when
 * not NULL) says whether a regular file was there to read. A FIFO or a device is never opened:
 * it could block. */
Elf *probe_elf_open(const char *path, int *fd, bool *exists);
void probe_elf_close(Elf *elf, int fd);

/* The first section called wanted that has bytes in the file (not SHT_NOBITS), NULL if none. */
Elf_Scn *probe_find_section(Elf *elf, const char *wanted);

#endif
