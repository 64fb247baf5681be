/* Finding an ELF file's sections by name: the section index readers (.gdb_index, .debug_names),
 * the unit checks (.debug_abbrev) and the input checks all look sections up this way. */
#ifndef PROBE_ELF_SECTIONS_H
#define PROBE_ELF_SECTIONS_H

#include <gelf.h>
#include <stddef.h>

#include "probe/elf_sections.h" /* probe_find_section and probe_elf_open, public: qaudit run and
                                      the reports use them */

/* The name of section scn, its header in *header; names is the index of the section-name string
 * table (elf_getshdrstrndx). NULL when the header or the name is unreadable. */
char *probe_section_name(Elf *elf, size_t names, Elf_Scn *scn, GElf_Shdr *header);

#endif
