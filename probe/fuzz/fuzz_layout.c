/* libFuzzer harness for the layout reader (issue 14: closed on bad input). Two kinds of input:
 *  - an ELF file (it starts with \x7fELF): whatever the bytes, layout_read returns OK or an input
 *    error with one line, never crashes (ASan/UBSan) or hangs, and what it returns is a layout
 *    validate.c accepts;
 *  - anything else is one byte flip in the .debug_* sections of one of the seed files (byte 0
 *    picks the seed, then 5 bytes: a 32-bit position, the XOR mask). The oracle: the read fails
 *    with LAYOUT_INPUT_ERROR, or yields exactly the seed's layout, or a layout that differs only
 *    in what a valid DWARF byte can change (a name, a type, a size) with as many types and
 *    members as the seed's and every type plausible. Anything else aborts. One flip, because
 *    that is what the oracle speaks of: several can compose another valid DWARF (a tag changed
 *    along with the attributes that go with it), which no reader can tell from the original.
 * The flip seeds are the linked ELF files of SEEDS (probe/fuzz/corpus) that read cleanly. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <dirent.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "probe/layout.h"
#include "reading/probe_reading.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SEEDS 16
#define MAX_RANGES 32
#define MAX_FLIPS 1

struct seed {
    unsigned char *bytes;
    size_t size;
    struct {
        size_t offset, size;
    } ranges[MAX_RANGES]; /* the file bytes of the .debug_* sections */
    size_t range_count, debug_bytes;
    struct layout_set layout;
};

static struct seed seeds[MAX_SEEDS];
static size_t seed_count;

/* A read of bytes through a memfd (libdwfl wants a path); the fd is closed after the read. */
static enum layout_status read_bytes(const unsigned char *bytes, size_t size,
                                     struct layout_set *set, char *error, size_t error_size)
{
    int fd = memfd_create("qaudit-fuzz", MFD_CLOEXEC);
    if (fd < 0 || write(fd, bytes, size) != (ssize_t)size) {
        if (fd >= 0)
            close(fd);
        memset(set, 0, sizeof *set);
        snprintf(error, error_size, "memfd");
        return LAYOUT_INPUT_ERROR;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    enum layout_status status = layout_read(path, NULL, set, error, error_size);
    close(fd);
    return status;
}

static void find_debug_sections(struct seed *s)
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_memory((char *)s->bytes, s->size);
    size_t names;
    if (elf == NULL || elf_getshdrstrndx(elf, &names) != 0) {
        if (elf)
            elf_end(elf);
        return;
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL && s->range_count < MAX_RANGES) {
        GElf_Shdr h;
        const char *name = gelf_getshdr(scn, &h) ? elf_strptr(elf, names, h.sh_name) : NULL;
        if (name == NULL || strncmp(name, ".debug_", 7) != 0 || h.sh_type == SHT_NOBITS ||
            h.sh_offset + h.sh_size > s->size || h.sh_size == 0)
            continue;
        s->ranges[s->range_count].offset = h.sh_offset;
        s->ranges[s->range_count++].size = h.sh_size;
        s->debug_bytes += h.sh_size;
    }
    elf_end(elf);
}

/* An object file: the flips' independent count reads its DWARF unrelocated (every string
 * offset 0), so only linked seeds take flips; object files still seed whole-file inputs. */
static bool relocatable(const unsigned char *bytes, size_t size)
{
    return size < sizeof(Elf64_Ehdr) || ((const Elf64_Ehdr *)(const void *)bytes)->e_type == ET_REL;
}

static void load_seed(const char *path)
{
    struct seed *s = &seeds[seed_count];
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    s->bytes = n > 0 ? malloc((size_t)n) : NULL;
    s->size = s->bytes && fread(s->bytes, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    char error[512];
    find_debug_sections(s);
    if (s->size == 0 || s->debug_bytes == 0 || relocatable(s->bytes, s->size) ||
        read_bytes(s->bytes, s->size, &s->layout, error, sizeof error) != LAYOUT_OK) {
        free(s->bytes);
        layout_free(&s->layout);
        memset(s, 0, sizeof *s);
        return;
    }
    seed_count++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    DIR *d = opendir(SEEDS);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL && seed_count < MAX_SEEDS) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".elf") == 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", SEEDS, e->d_name);
            load_seed(path);
        }
    }
    if (d != NULL)
        closedir(d);
    if (seed_count == 0) {
        fprintf(stderr, "fuzz_layout: no seed in %s reads cleanly\n", SEEDS);
        abort();
    }
    return 0;
}

static int same_string(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int same_member(const struct layout_member *a, const struct layout_member *b)
{
    return same_string(a->name, b->name) && same_string(a->type, b->type) &&
           a->offset == b->offset && a->size == b->size && a->bit_offset == b->bit_offset &&
           a->bit_size == b->bit_size && a->is_base == b->is_base && a->depth == b->depth;
}

/* The same layout, type by type (what the renderings print). */
static int same_layout(const struct layout_set *a, const struct layout_set *b)
{
    if (a->count != b->count)
        return 0;
    for (size_t i = 0; i < a->count; i++) {
        const struct layout_type *x = &a->types[i], *y = &b->types[i];
        if (!same_string(x->name, y->name) || strcmp(x->kind, y->kind) != 0 || x->size != y->size ||
            x->align != y->align || x->packed != y->packed || x->odr_conflict != y->odr_conflict ||
            x->member_count != y->member_count)
            return 0;
        for (size_t m = 0; m < x->member_count; m++)
            if (!same_member(&x->members[m], &y->members[m]))
                return 0;
    }
    return 1;
}

/* The names of the struct, class and union definitions among the units' top DIEs, as libdw sees
 * them apart from the reader (the seeds are C: no namespaces), counted once each. A flipped byte
 * may take a type's name or tag away in valid DWARF; then it is gone for both. */
static size_t named_definitions(const unsigned char *bytes, size_t size)
{
    Elf *elf = elf_memory((char *)bytes, size);
    Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
    const char *names[64];
    size_t n = 0;
    Dwarf_CU *cu = NULL;
    Dwarf_Die unit, sub, child;
    Dwarf_Half version;
    uint8_t type;
    while (dw != NULL && dwarf_get_units(dw, cu, &cu, &version, &type, &unit, &sub) == 0) {
        if (dwarf_child(&unit, &child) != 0)
            continue;
        do {
            int tag = dwarf_tag(&child);
            const char *name = dwarf_diename(&child);
            if ((tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
                 tag != DW_TAG_class_type) ||
                name == NULL || dwarf_hasattr(&child, DW_AT_declaration) ||
                dwarf_hasattr(&child, DW_AT_signature))
                continue;
            size_t i = 0;
            while (i < n && strcmp(names[i], name) != 0)
                i++;
            if (i == n && n < 64)
                names[n++] = name;
        } while (dwarf_siblingof(&child, &child) == 0);
    }
    if (dw != NULL)
        dwarf_end(dw);
    if (elf != NULL)
        elf_end(elf);
    return n;
}

/* As many types and members as the seed's (or as many types as libdw sees named definitions,
 * when a type lost its name), each type plausible; NULL, or what is wrong. */
static const char *implausible(const struct layout_set *got, const struct layout_set *seed,
                               const unsigned char *bytes, size_t bytes_size, char *why,
                               size_t size)
{
    if (got->count != seed->count) {
        size_t named = named_definitions(bytes, bytes_size);
        if (got->count != named) {
            snprintf(why, size, "%zu types, the seed has %zu and libdw sees %zu", got->count,
                     seed->count, named);
            return why;
        }
        for (size_t i = 0; i < got->count; i++)
            if (probe_layout_type_problem(&got->types[i], why, size) != NULL)
                return why;
        return NULL;
    }
    for (size_t i = 0; i < got->count; i++) {
        if (got->types[i].member_count != seed->types[i].member_count) {
            snprintf(why, size, "%s: %zu members, the seed's %s has %zu", got->types[i].name,
                     got->types[i].member_count, seed->types[i].name, seed->types[i].member_count);
            return why;
        }
        if (probe_layout_type_problem(&got->types[i], why, size) != NULL)
            return why;
    }
    return NULL;
}

static void check_error(const char *error)
{
    if (error[0] == '\0' || strchr(error, '\n') != NULL) {
        fprintf(stderr, "fuzz_layout: an input error without one line: '%s'\n", error);
        abort();
    }
}

static void whole_file(const uint8_t *data, size_t size)
{
    struct layout_set set;
    char error[512] = "", why[512];
    enum layout_status status = read_bytes(data, size, &set, error, sizeof error);
    if (status == LAYOUT_INPUT_ERROR) {
        check_error(error);
    } else if (status != LAYOUT_OK) {
        fprintf(stderr, "fuzz_layout: status %d\n", (int)status);
        abort();
    } else {
        for (size_t i = 0; i < set.count; i++)
            if (probe_layout_type_problem(&set.types[i], why, sizeof why) != NULL) {
                fprintf(stderr, "fuzz_layout: an implausible layout passed: %s\n", why);
                abort();
            }
    }
    layout_free(&set);
}

static void flips(const uint8_t *data, size_t size)
{
    struct seed *s = &seeds[data[0] % seed_count];
    unsigned char *bytes = malloc(s->size);
    if (bytes == NULL)
        return;
    memcpy(bytes, s->bytes, s->size);
    for (size_t at = 1, n = 0; at + 5 <= size && n < MAX_FLIPS; at += 5, n++) {
        uint32_t position;
        memcpy(&position, data + at, 4);
        size_t left = position % s->debug_bytes, r = 0;
        while (left >= s->ranges[r].size)
            left -= s->ranges[r++].size;
        bytes[s->ranges[r].offset + left] ^= data[at + 4];
    }
    const char *dump = getenv("FUZZ_LAYOUT_DUMP"); /* to look at a failing input's file */
    FILE *f = dump ? fopen(dump, "wb") : NULL;
    if (f != NULL) {
        fwrite(bytes, 1, s->size, f);
        fclose(f);
    }
    struct layout_set set;
    char error[512] = "", why[512];
    enum layout_status status = read_bytes(bytes, s->size, &set, error, sizeof error);
    if (status == LAYOUT_INPUT_ERROR) {
        check_error(error);
    } else if (status != LAYOUT_OK) {
        fprintf(stderr, "fuzz_layout: status %d\n", (int)status);
        abort();
    } else if (!same_layout(&set, &s->layout) &&
               implausible(&set, &s->layout, bytes, s->size, why, sizeof why) != NULL) {
        fprintf(stderr, "fuzz_layout: a flipped seed read OK into another layout: %s\n", why);
        abort();
    }
    layout_free(&set);
    free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 4 && memcmp(data, ELFMAG, SELFMAG) == 0)
        whole_file(data, size);
    else if (size >= 1)
        flips(data, size);
    return 0;
}
