/* The probe's inputs: checked files and offline libdwfl sessions with the standard callbacks,
 * so a separate debug file is found by build id or .gnu_debuglink. An ELF file is also checked
 * for truncation here, because libdwfl reads a cut file as one without debug info. */
#include "probe_reading.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* True when [offset, offset + length) lies inside a file of `size` bytes (no overflow). */
static bool inside(uint64_t offset, uint64_t length, uint64_t size)
{
    return offset <= size && length <= size - offset;
}

/* The first section whose bytes lie outside the file, or whose header is unreadable: its index,
 * with where it ends in *end; 0 when every section is inside. */
static size_t section_outside(Elf *elf, uint64_t size, uint64_t *end)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr header;
        if (gelf_getshdr(scn, &header) == NULL) {
            *end = 0;
            return elf_ndxscn(scn);
        }
        if (header.sh_type != SHT_NOBITS && header.sh_type != SHT_NULL &&
            !inside(header.sh_offset, header.sh_size, size)) {
            *end = header.sh_offset + header.sh_size;
            return elf_ndxscn(scn);
        }
    }
    return 0;
}

/* False, with "path: truncated or corrupt ELF: why" in error, when elf's headers or a section's
 * bytes lie past the end of its image (a cut download or copy), or its headers are unreadable. */
static bool check_elf(Elf *elf, const char *path, char *error, size_t error_size)
{
    size_t size = 0, count, names;
    GElf_Ehdr eh;
    if (elf_rawfile(elf, &size) == NULL || gelf_getehdr(elf, &eh) == NULL) {
        snprintf(error, error_size, "%s: truncated or corrupt ELF: %s", path, elf_errmsg(-1));
        return false;
    }
    uint64_t headers_end = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
    if (eh.e_shoff != 0 && !inside(eh.e_shoff, (uint64_t)eh.e_shnum * eh.e_shentsize, size)) {
        snprintf(error, error_size,
                 "%s: truncated or corrupt ELF: its section headers end at byte %llu, past the "
                 "end of the file (%zu bytes)",
                 path, (unsigned long long)headers_end, size);
        return false;
    }
    if (!inside(eh.e_phoff, (uint64_t)eh.e_phnum * eh.e_phentsize, size)) {
        snprintf(error, error_size,
                 "%s: truncated or corrupt ELF: its program headers lie past the end of the file "
                 "(%zu bytes)",
                 path, size);
        return false;
    }
    if (elf_getshdrnum(elf, &count) != 0 || (count > 0 && elf_getshdrstrndx(elf, &names) != 0)) {
        snprintf(error, error_size, "%s: truncated or corrupt ELF: %s", path, elf_errmsg(-1));
        return false;
    }
    uint64_t end;
    size_t bad = section_outside(elf, size, &end);
    if (bad != 0) {
        GElf_Shdr header;
        Elf_Scn *scn = elf_getscn(elf, bad);
        const char *name = scn ? probe_section_name(elf, names, scn, &header) : NULL;
        snprintf(error, error_size,
                 "%s: truncated or corrupt ELF: section %zu (%s) ends at byte %llu, past the end "
                 "of the file (%zu bytes)",
                 path, bad, name ? name : "unnamed", (unsigned long long)end, size);
        return false;
    }
    return true;
}

/* An object file (.o) built with -fdebug-types-section holds one .debug_types section per type
 * unit (COMDAT groups), of which libdw reads one: the others' types would be missing. */
static bool split_type_sections(Elf *elf, const char *path, char *error, size_t error_size)
{
    GElf_Ehdr eh;
    size_t names, count = 0;
    if (gelf_getehdr(elf, &eh) == NULL || eh.e_type != ET_REL ||
        elf_getshdrstrndx(elf, &names) != 0)
        return false;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr header;
        const char *name = probe_section_name(elf, names, scn, &header);
        count += name != NULL && strcmp(name, ".debug_types") == 0;
    }
    if (count < 2)
        return false;
    snprintf(error, error_size,
             "%s: an object file with %zu .debug_types sections (type units in COMDAT groups), "
             "of which libdw reads one: link it first",
             path, count);
    return true;
}

/* An ELF file (by its magic) must be whole; anything else is left to libdwfl to judge. */
static bool check_elf_file(const char *path, char *error, size_t error_size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return false;
    }
    unsigned char magic[SELFMAG];
    bool ok = true;
    if (pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
        memcmp(magic, ELFMAG, SELFMAG) == 0) {
        elf_version(EV_CURRENT);
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (elf == NULL || elf_kind(elf) != ELF_K_ELF) {
            snprintf(error, error_size, "%s: truncated or corrupt ELF: %s", path, elf_errmsg(-1));
            ok = false;
        } else {
            ok = check_elf(elf, path, error, error_size) &&
                 !split_type_sections(elf, path, error, error_size);
        }
        if (elf != NULL)
            elf_end(elf);
    }
    close(fd);
    return ok;
}

bool probe_check_file(const char *path, char *error, size_t error_size)
{
    struct stat st;
    if (access(path, R_OK) != 0 || stat(path, &st) != 0) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(error, error_size, "%s: not a regular file", path);
        return false;
    }
    return check_elf_file(path, error, error_size);
}

Dwfl_Module *probe_report_offline(const char *path, Dwfl **dwfl, char *error, size_t error_size)
{
    *dwfl = dwfl_begin(&offline_callbacks);
    Dwfl_Module *module = *dwfl ? dwfl_report_offline(*dwfl, "", path, -1) : NULL;
    if (module == NULL) {
        snprintf(error, error_size, "%s: not an ELF file libdwfl can read (%s)", path,
                 dwfl_errmsg(-1));
        if (*dwfl)
            dwfl_end(*dwfl);
        *dwfl = NULL;
        return NULL;
    }
    dwfl_report_end(*dwfl, NULL, NULL);
    return module;
}
