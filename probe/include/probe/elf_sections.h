/* Finding an ELF file's section by name, for the parts that read ELF files without DWARF:
 * qaudit run tells a Go program by its .note.go.buildid, and so do the reports. The probe's
 * readers look their sections up the same way (src/elf_sections.h). */
#ifndef PROBE_PUBLIC_ELF_SECTIONS_H
#define PROBE_PUBLIC_ELF_SECTIONS_H

#include <gelf.h>

/* The first section called wanted that has bytes in the file (not SHT_NOBITS), NULL if none. */
Elf_Scn *probe_find_section(Elf *elf, const char *wanted);

#endif
