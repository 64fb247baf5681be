/* The end of a DIE's attributes: the last attribute's value address (dwarf_getattrs hands each
 * attribute over with it) plus the size of its value in its form (DWARF 5, section 7.5.6); and
 * the bounds of a DIE's unit, from its header. */
#include "probe_reading.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct last {
    const unsigned char *value;
    unsigned form;
    bool any;
};

/* Keeps the last attribute whose value is in the DIE (an implicit constant's is in the
 * abbreviation). */
static int remember(Dwarf_Attribute *attr, void *arg)
{
    struct last *last = arg;
    if (dwarf_whatform(attr) == DW_FORM_implicit_const)
        return DWARF_CB_OK;
    last->value = attr->valp;
    last->form = dwarf_whatform(attr);
    last->any = true;
    return DWARF_CB_OK;
}

/* The size of an LEB128 number at p, or 0 when it does not end before end or 16 bytes. */
static size_t leb128_size(const unsigned char *p, const unsigned char *end)
{
    for (size_t i = 0; i < 16 && p + i < end; i++)
        if ((p[i] & 0x80) == 0)
            return i + 1;
    return 0;
}

static uint64_t leb128_value(const unsigned char *p)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7, p++) {
        v |= (uint64_t)(*p & 0x7f) << shift;
        if ((*p & 0x80) == 0)
            break;
    }
    return v;
}

/* The size of a value of form at p that is encoded in its value (a block's length, a string's
 * null, a LEB128's last byte), or 0 when it does not end before end. */
static size_t variable_size(unsigned form, const unsigned char *p, const unsigned char *end)
{
    size_t room = (size_t)(end - p), n;
    switch (form) {
    case DW_FORM_string: {
        const unsigned char *null = memchr(p, 0, room);
        return null ? (size_t)(null - p) + 1 : 0;
    }
    case DW_FORM_block1:
        n = room >= 1 ? 1 + (size_t)probe_little_endian(p, 1) : 0;
        break;
    case DW_FORM_block2:
        n = room >= 2 ? 2 + (size_t)probe_little_endian(p, 2) : 0;
        break;
    case DW_FORM_block4:
        n = room >= 4 ? 4 + (size_t)probe_little_endian(p, 4) : 0;
        break;
    case DW_FORM_block:
    case DW_FORM_exprloc:
        n = leb128_size(p, end);
        n = n ? n + (size_t)leb128_value(p) : 0;
        break;
    default: /* the LEB128 forms */
        n = leb128_size(p, end);
    }
    return n <= room ? n : 0;
}

int probe_form_fixed_size(unsigned form, uint8_t address_size, uint8_t offset_size)
{
    switch (form) {
    case DW_FORM_flag_present:
    case DW_FORM_implicit_const:
        return 0;
    case DW_FORM_data1:
    case DW_FORM_ref1:
    case DW_FORM_flag:
    case DW_FORM_strx1:
    case DW_FORM_addrx1:
        return 1;
    case DW_FORM_data2:
    case DW_FORM_ref2:
    case DW_FORM_strx2:
    case DW_FORM_addrx2:
        return 2;
    case DW_FORM_strx3:
    case DW_FORM_addrx3:
        return 3;
    case DW_FORM_data4:
    case DW_FORM_ref4:
    case DW_FORM_ref_sup4:
    case DW_FORM_strx4:
    case DW_FORM_addrx4:
        return 4;
    case DW_FORM_data8:
    case DW_FORM_ref8:
    case DW_FORM_ref_sig8:
    case DW_FORM_ref_sup8:
        return 8;
    case DW_FORM_data16:
        return 16;
    case DW_FORM_addr:
        return address_size;
    case DW_FORM_ref_addr:
    case DW_FORM_sec_offset:
    case DW_FORM_strp:
    case DW_FORM_line_strp:
    case DW_FORM_strp_sup:
    case DW_FORM_GNU_ref_alt:
    case DW_FORM_GNU_strp_alt:
        return offset_size;
    case DW_FORM_udata:
    case DW_FORM_sdata:
    case DW_FORM_ref_udata:
    case DW_FORM_strx:
    case DW_FORM_addrx:
    case DW_FORM_loclistx:
    case DW_FORM_rnglistx:
    case DW_FORM_GNU_addr_index:
    case DW_FORM_GNU_str_index:
    case DW_FORM_string:
    case DW_FORM_block1:
    case DW_FORM_block2:
    case DW_FORM_block4:
    case DW_FORM_block:
    case DW_FORM_exprloc:
        return FORM_VARIABLE;
    default: /* DW_FORM_indirect, or a form no table holds */
        return FORM_UNKNOWN;
    }
}

bool probe_form_size(unsigned form, const unsigned char *p, const unsigned char *end,
                     uint8_t address_size, uint8_t offset_size, size_t *size)
{
    int fixed = probe_form_fixed_size(form, address_size, offset_size);
    size_t n = fixed >= 0                          ? (size_t)fixed
               : fixed == FORM_VARIABLE && p < end ? variable_size(form, p, end)
                                                   : 0;
    if ((fixed < 0 && n == 0) || n > (size_t)(end - p))
        return false;
    *size = n;
    return true;
}

const unsigned char *probe_die_attributes_end(Dwarf_Die *die)
{
    struct last last = {NULL, 0, false};
    Dwarf_Die unit;
    uint8_t address_size, offset_size;
    const unsigned char *unit_end;
    size_t size;
    if (dwarf_diecu(die, &unit, &address_size, &offset_size) == NULL ||
        dwarf_getattrs(die, remember, &last, 0) != 1 || !last.any ||
        (unit_end = probe_unit_end(die)) == NULL)
        return NULL; /* no attribute in the DIE: its end is past the code, which is not told */
    return probe_form_size(last.form, last.value, unit_end, address_size, offset_size, &size)
               ? last.value + size
               : NULL;
}

bool probe_unit_bounds(Dwarf_Die *die, Dwarf_Off *abbrev, Dwarf_Off *end)
{
    Dwarf_Half version;
    uint8_t type;
    if (die->cu == NULL ||
        dwarf_cu_info(die->cu, &version, &type, NULL, NULL, NULL, NULL, NULL) != 0)
        return false;
    uint64_t signature; /* asked for to read .debug_types, where DWARF 4 type units are */
    Dwarf_Off start = dwarf_dieoffset(die) - dwarf_cuoffset(die);
    return dwarf_next_unit(dwarf_cu_getdwarf(die->cu), start, end, NULL, NULL, abbrev, NULL, NULL,
                           version == 4 && type == DW_UT_type ? &signature : NULL, NULL) == 0;
}

/* The bytes of the unit sections (.debug_info, .debug_types, their .dwo and .zdebug names) of
 * dwarf, read once per object and read generation. */
struct unit_sections {
    Dwarf *dwarf;
    unsigned generation;
    size_t count;
    struct {
        const unsigned char *start, *end;
    } range[8];
};

static bool is_unit_section(const char *name)
{
    static const char *const names[] = {".debug_info",   ".debug_types",    ".zdebug_info",
                                        ".zdebug_types", ".debug_info.dwo", ".debug_types.dwo"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

static const struct unit_sections *unit_sections_of(Dwarf *dwarf)
{
    static _Thread_local struct unit_sections last;
    if (last.dwarf == dwarf && dwarf != NULL && last.generation == probe_read_generation())
        return &last;
    last = (struct unit_sections){.dwarf = dwarf, .generation = probe_read_generation()};
    Elf *elf = dwarf != NULL ? dwarf_getelf(dwarf) : NULL;
    size_t names;
    if (elf == NULL || elf_getshdrstrndx(elf, &names) != 0)
        return &last;
    Elf_Scn *scn = NULL;
    while (last.count < sizeof last.range / sizeof last.range[0] &&
           (scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr header;
        const char *name = probe_section_name(elf, names, scn, &header);
        if (name == NULL || header.sh_type == SHT_NOBITS || !is_unit_section(name))
            continue;
        Elf_Data *data = elf_getdata(scn, NULL); /* libdw has decompressed it in place */
        if (data == NULL || data->d_buf == NULL)
            continue;
        const unsigned char *start = data->d_buf;
        last.range[last.count].start = start;
        last.range[last.count++].end = start + data->d_size;
    }
    return &last;
}

/* Whether the length bytes from from lie in one unit section of dwarf. libdw takes a unit's length
 * from its header without holding it to the section's size: a corrupt length put the unit's end
 * past the data, and a step to that end read unmapped memory (fuzz_layout's crash of 2026-12-05).
 */
static bool within_unit_section(Dwarf *dwarf, const unsigned char *from, uint64_t length)
{
    const struct unit_sections *u = unit_sections_of(dwarf);
    for (size_t i = 0; i < u->count; i++)
        if (from >= u->range[i].start && from <= u->range[i].end)
            return length <= (uint64_t)(u->range[i].end - from);
    return false;
}

const unsigned char *probe_unit_end(Dwarf_Die *die)
{
    Dwarf_Off abbrev, end, at = dwarf_dieoffset(die);
    if (!probe_unit_bounds(die, &abbrev, &end) || end < at)
        return NULL;
    const unsigned char *from = die->addr;
    if (!within_unit_section(dwarf_cu_getdwarf(die->cu), from, end - at))
        return NULL;
    return from + (end - at);
}
