/* Finding an ELF file's sections by name (elf_sections.h). */
#include "elf_sections.h"

#include <string.h>

char *probe_section_name(Elf *elf, size_t names, Elf_Scn *scn, GElf_Shdr *header)
{
    return gelf_getshdr(scn, header) ? elf_strptr(elf, names, header->sh_name) : NULL;
}

Elf_Scn *probe_find_section(Elf *elf, const char *wanted)
{
    size_t names;
    if (elf == NULL || elf_getshdrstrndx(elf, &names) != 0)
        return NULL;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr header;
        const char *name = probe_section_name(elf, names, scn, &header);
        if (name != NULL && strcmp(name, wanted) == 0 && header.sh_type != SHT_NOBITS)
            return scn;
    }
    return NULL;
}
