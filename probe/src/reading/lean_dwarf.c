/* The sections hidden from libdw are only ever renamed in this process's private mapping (a
 * MAP_PRIVATE page copy): the file on disk is never written. */
#include "probe_reading.h"

#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* What struct layouts never need: line tables, location and range lists, address tables for
 * code, call frames, macros. Types, names and strings (.debug_info, .debug_abbrev, .debug_str,
 * .debug_line_str, .debug_str_offsets, .debug_addr, .debug_types) stay. */
static const char *const unread[] = {".debug_line",     ".debug_loc",      ".debug_loclists",
                                     ".debug_ranges",   ".debug_rnglists", ".debug_aranges",
                                     ".debug_frame",    ".debug_macro",    ".debug_macinfo",
                                     ".debug_pubnames", ".debug_pubtypes"};

static bool is_unread(const char *name)
{
    /* Also their .zdebug_ spelling (-gz=zlib-gnu). */
    const char *plain = strncmp(name, ".zdebug_", 8) == 0 ? name + 2 : name + 1;
    for (size_t i = 0; i < sizeof unread / sizeof unread[0]; i++)
        if (strcmp(plain, unread[i] + 1) == 0)
            return true;
    return false;
}

/* Renames the unread sections; true when the file has .debug_info of its own. */
static bool hide_unread_sections(struct lean_dwarf *d)
{
    size_t names;
    if (elf_getshdrstrndx(d->elf, &names) != 0)
        return false;
    bool has_info = false;
    const char *lo = d->map, *hi = lo + d->size;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(d->elf, scn)) != NULL) {
        GElf_Shdr header;
        char *name = probe_section_name(d->elf, names, scn, &header);
        if (name == NULL)
            continue;
        if (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0)
            has_info = header.sh_type != SHT_NOBITS;
        else if (is_unread(name) && name >= lo && name + 2 < hi)
            name[1] = 'X'; /* ".Xebug_line": a name libdw does not know */
    }
    return has_info;
}

/* An object file (.o): its DWARF holds relocations (string offsets, references between
 * sections) that libdw alone does not apply, libdwfl does. */
static bool is_relocatable(Elf *elf)
{
    GElf_Ehdr header;
    return gelf_getehdr(elf, &header) == NULL || header.e_type == ET_REL;
}

bool probe_lean_dwarf_open(const char *path, struct lean_dwarf *out)
{
    *out = (struct lean_dwarf){0};
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return false;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 64) {
        close(fd);
        return false;
    }
    out->size = (size_t)st.st_size;
    out->map = mmap(NULL, out->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (out->map == MAP_FAILED) {
        out->map = NULL;
        return false;
    }
    elf_version(EV_CURRENT);
    out->elf = elf_memory(out->map, out->size);
    if (out->elf == NULL || elf_kind(out->elf) != ELF_K_ELF || is_relocatable(out->elf) ||
        !hide_unread_sections(out) ||
        (out->dwarf = dwarf_begin_elf(out->elf, DWARF_C_READ, NULL)) == NULL) {
        probe_lean_dwarf_close(out);
        return false;
    }
    return true;
}

void probe_lean_dwarf_close(struct lean_dwarf *d)
{
    if (d->dwarf != NULL)
        dwarf_end(d->dwarf);
    if (d->elf != NULL)
        elf_end(d->elf);
    if (d->map != NULL)
        munmap(d->map, d->size);
    *d = (struct lean_dwarf){0};
}
