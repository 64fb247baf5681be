/* Reading a GNU build id from an ELF file: libdw's dwelf_elf_gnu_build_id finds the
 * NT_GNU_BUILD_ID note (a SHT_NOTE section, or a PT_NOTE segment when a stripped file has no
 * section headers); this adds the file checks and the hex. And whether a file has a section. */
#include "reports_base.h"
#include "probe/elf_sections.h"

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>

enum build_id_status report_elf_file_build_id(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    int fd;
    bool exists;
    Elf *elf = probe_elf_open(path, &fd, &exists);
    if (elf == NULL)
        return exists ? BUILD_ID_NONE : BUILD_ID_NO_FILE;
    const unsigned char *id = NULL;
    ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
    bool found = n > 0 && 2 * (size_t)n < size;
    for (ssize_t i = 0; found && i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
    probe_elf_close(elf, fd);
    return found ? BUILD_ID_FOUND : BUILD_ID_NONE;
}

bool report_elf_file_has_section(const char *path, const char *name)
{
    int fd;
    Elf *elf = probe_elf_open(path, &fd, NULL);
    bool found = elf != NULL && probe_find_section(elf, name) != NULL;
    probe_elf_close(elf, fd);
    return found;
}
