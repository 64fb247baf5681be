/* Opening ELF files, and finding their sections by name (probe_reading.h). */
#include "probe_reading.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

Elf *probe_elf_open(const char *path, int *fd, bool *exists)
{
    struct stat st;
    bool found = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    *fd = found ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (exists != NULL)
        *exists = *fd >= 0;
    if (*fd < 0)
        return NULL;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
    if (elf != NULL && elf_kind(elf) == ELF_K_ELF)
        return elf;
    probe_elf_close(elf, *fd);
    *fd = -1;
    return NULL;
}

void probe_elf_close(Elf *elf, int fd)
{
    elf_end(elf);
    if (fd >= 0)
        close(fd);
}

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
