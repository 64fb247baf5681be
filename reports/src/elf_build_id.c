/* Reading a GNU build id from an ELF file: libdw's dwelf_elf_gnu_build_id finds the
 * NT_GNU_BUILD_ID note (a SHT_NOTE section, or a PT_NOTE segment when a stripped file has no
 * section headers); this adds the file checks and the hex. */
#include "elf_build_id.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

enum build_id_status elf_file_build_id(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) /* a FIFO or device would block */
        return BUILD_ID_NO_FILE;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return BUILD_ID_NO_FILE;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const unsigned char *id = NULL;
    ssize_t n = elf != NULL && elf_kind(elf) == ELF_K_ELF
                    ? dwelf_elf_gnu_build_id(elf, (const void **)&id)
                    : 0;
    bool found = n > 0 && 2 * (size_t)n < size;
    for (ssize_t i = 0; found && i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
    elf_end(elf);
    close(fd);
    return found ? BUILD_ID_FOUND : BUILD_ID_NONE;
}
