/* Reading a GNU build id from an ELF file with libelf: the NT_GNU_BUILD_ID note of a PT_NOTE
 * segment (what the loader maps, present in stripped files too), else of a SHT_NOTE section. */
#include "elf_build_id.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The build id note in data, as hex in out; false when there is none. */
static bool note_build_id(Elf_Data *data, char *out, size_t size)
{
    GElf_Nhdr note;
    size_t offset = 0, name_at, desc_at, next;
    while (data != NULL && (next = gelf_getnote(data, offset, &note, &name_at, &desc_at)) > 0) {
        const char *base = data->d_buf;
        if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
            memcmp(base + name_at, "GNU", 4) == 0 && note.n_descsz > 0 &&
            2 * (size_t)note.n_descsz < size) {
            const unsigned char *id = (const unsigned char *)base + desc_at;
            for (size_t i = 0; i < note.n_descsz; i++)
                snprintf(out + 2 * i, 3, "%02x", id[i]);
            return true;
        }
        offset = next;
    }
    return false;
}

static bool segments_build_id(Elf *elf, char *out, size_t size)
{
    size_t count;
    if (elf_getphdrnum(elf, &count) != 0)
        return false;
    for (size_t i = 0; i < count; i++) {
        GElf_Phdr phdr;
        if (gelf_getphdr(elf, (int)i, &phdr) == NULL || phdr.p_type != PT_NOTE)
            continue;
        Elf_Data *data =
            elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz, ELF_T_NHDR);
        if (note_build_id(data, out, size))
            return true;
    }
    return false;
}

static bool sections_build_id(Elf *elf, char *out, size_t size)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) != NULL && shdr.sh_type == SHT_NOTE &&
            note_build_id(elf_getdata(scn, NULL), out, size))
            return true;
    }
    return false;
}

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
    bool found = elf != NULL && elf_kind(elf) == ELF_K_ELF &&
                 (segments_build_id(elf, out, size) || sections_build_id(elf, out, size));
    elf_end(elf);
    close(fd);
    if (!found)
        out[0] = '\0';
    return found ? BUILD_ID_FOUND : BUILD_ID_NONE;
}
