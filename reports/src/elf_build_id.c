/* Reading a GNU build id from an ELF file: libdw's dwelf_elf_gnu_build_id finds the
 * NT_GNU_BUILD_ID note (a SHT_NOTE section, or a PT_NOTE segment when a stripped file has no
 * section headers); this adds the file checks and the hex. And whether a file has a section. */
#include "elf_build_id.h"
#include "probe/elf_sections.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* The ELF file at path, opened for reading (*fd to close after elf_end), or NULL. */
static Elf *open_elf(const char *path, int *fd)
{
    struct stat st;
    *fd = -1;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) /* a FIFO or device would block */
        return NULL;
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return NULL;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
    if (elf != NULL && elf_kind(elf) == ELF_K_ELF)
        return elf;
    elf_end(elf);
    return NULL;
}

enum build_id_status elf_file_build_id(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    int fd;
    Elf *elf = open_elf(path, &fd);
    if (elf == NULL) {
        if (fd >= 0)
            close(fd);
        return fd < 0 ? BUILD_ID_NO_FILE : BUILD_ID_NONE;
    }
    const unsigned char *id = NULL;
    ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
    bool found = n > 0 && 2 * (size_t)n < size;
    for (ssize_t i = 0; found && i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
    elf_end(elf);
    close(fd);
    return found ? BUILD_ID_FOUND : BUILD_ID_NONE;
}

bool elf_file_has_section(const char *path, const char *name)
{
    int fd;
    Elf *elf = open_elf(path, &fd);
    bool found = elf != NULL && probe_find_section(elf, name) != NULL;
    if (elf != NULL)
        elf_end(elf);
    if (fd >= 0)
        close(fd);
    return found;
}
