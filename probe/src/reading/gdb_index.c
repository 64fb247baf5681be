/* .gdb_index lookups: a hash of the name probes an open-addressed table whose slots point into
 * the constant pool (the name, then its CU vector). All reads are bounds-checked: the section
 * comes from the binary under audit and may be damaged. */
#include "probe_reading.h"

#include <ctype.h>
#include <gelf.h>
#include <string.h>

#define KIND_TYPE 1

static uint32_t read32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t read64(const unsigned char *p)
{
    return (uint64_t)read32(p) | (uint64_t)read32(p + 4) << 32;
}

bool probe_gdb_index_open(Dwarf *dw, struct gdb_index *out)
{
    Elf_Scn *scn = probe_find_section(dwarf_getelf(dw), ".gdb_index");
    Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
    if (data == NULL || data->d_buf == NULL || data->d_size < 24)
        return false;
    const unsigned char *p = data->d_buf;
    uint32_t version = read32(p), cu_list = read32(p + 4), types_list = read32(p + 8);
    uint32_t symbols = read32(p + 16), pool = read32(p + 20);
    if ((version != 7 && version != 8) || cu_list > types_list || types_list > data->d_size ||
        symbols > pool || pool > data->d_size || (types_list - cu_list) % 16 != 0)
        return false;
    uint32_t slots = (pool - symbols) / 8;
    if (slots == 0 || (slots & (slots - 1)) != 0)
        return false;
    *out = (struct gdb_index){p,           data->d_size,       (types_list - cu_list) / 16,
                              p + cu_list, p + symbols,        slots,
                              p + pool,    data->d_size - pool};
    return true;
}

/* The hash of index versions 5 and later. */
static uint32_t name_hash(const char *s)
{
    uint32_t r = 0;
    for (; *s; s++)
        r = r * 67 + (uint32_t)tolower((unsigned char)*s) - 113;
    return r;
}

/* The CU vector offset of name, or -1. */
static int64_t find_name(const struct gdb_index *x, const char *name)
{
    uint32_t hash = name_hash(name), mask = x->slots - 1;
    uint32_t slot = hash & mask, step = ((hash * 17) & mask) | 1;
    size_t length = strlen(name);
    for (uint32_t probes = 0; probes < x->slots; probes++, slot = (slot + step) & mask) {
        uint32_t name_at = read32(x->table + 8 * (size_t)slot);
        uint32_t vector_at = read32(x->table + 8 * (size_t)slot + 4);
        if (name_at == 0 && vector_at == 0)
            return -1;
        if (name_at < x->pool_size && x->pool_size - name_at > length &&
            memcmp(x->pool + name_at, name, length + 1) == 0)
            return vector_at;
    }
    return -1;
}

int probe_gdb_index_type_units(const struct gdb_index *x, const char *name, uint64_t *offsets,
                               int max)
{
    int64_t at = find_name(x, name);
    if (at < 0)
        return 0;
    if ((uint64_t)at + 4 > x->pool_size)
        return -1;
    uint32_t count = read32(x->pool + at);
    if (count > (x->pool_size - (uint64_t)at - 4) / 4)
        return -1;
    int found = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t entry = read32(x->pool + at + 4 + 4 * (size_t)i);
        uint32_t cu = entry & 0xffffff, kind = (entry >> 28) & 7;
        if (kind != KIND_TYPE)
            continue;
        if (cu >= x->cu_count || found == max)
            return -1; /* a type unit, or more than we keep: read everything */
        offsets[found++] = read64(x->cus + 16 * (size_t)cu);
    }
    return found;
}
