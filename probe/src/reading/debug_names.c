/* .debug_names lookups. The section is a sequence of name indexes (a linker that does not merge
 * them leaves one per object file); each has a list of units, a hash table of names (DJB hash of
 * the name with ASCII letters folded to lower case, as LLVM and gdb write it), the names'
 * offsets into .debug_str, an abbreviation table and a pool of entries: per name, the DIEs of
 * that name, each with its tag and unit. Every read is bounds-checked: the section comes from the
 * binary under audit and may be damaged, in which case the caller reads every unit. */
#include "probe_reading.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdbool.h>
#include <string.h>

/* Index attributes (DWARF 5, table 7.23); elfutils' dwarf.h does not name them. */
enum { IDX_COMPILE_UNIT = 1, IDX_TYPE_UNIT = 2 };

#define MAX_ABBREVS 64
#define MAX_ATTRIBUTES 8

struct cursor {
    const unsigned char *p, *end;
    bool bad; /* a read went past the end */
};

static uint64_t fixed(struct cursor *c, size_t n)
{
    if ((size_t)(c->end - c->p) < n) {
        c->bad = true;
        c->p = c->end;
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)c->p[i] << (8 * i);
    c->p += n;
    return v;
}

static uint64_t uleb(struct cursor *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; c->p < c->end; shift += 7) {
        unsigned char byte = *c->p++;
        if (shift < 64)
            v |= (uint64_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0)
            return v;
    }
    c->bad = true;
    return 0;
}

struct abbrev {
    uint64_t code, tag;
    size_t count;
    struct {
        uint64_t index, form;
    } attributes[MAX_ATTRIBUTES];
};

/* One name index (one unit of the section). */
struct name_index {
    unsigned offset_size;
    uint32_t cus, local_tus, foreign_tus, buckets, names;
    const unsigned char *cu_list, *tu_list, *bucket_table, *hashes, *string_offsets, *entry_offsets,
        *pool, *end;
    struct abbrev abbrevs[MAX_ABBREVS];
    size_t abbrev_count;
};

struct sections {
    const unsigned char *names, *strings;
    size_t names_size, strings_size;
};

static Elf_Data *section_data(Elf *elf, size_t names, Elf_Scn *scn, const char *wanted)
{
    GElf_Shdr h;
    const char *name = probe_section_name(elf, names, scn, &h);
    if (name == NULL || strcmp(name, wanted) != 0 || h.sh_type == SHT_NOBITS)
        return NULL;
    /* Compressed (-gz): inflated in memory, as libdw does with the sections it knows. */
    if ((h.sh_flags & SHF_COMPRESSED) != 0 && elf_compress(scn, 0, 0) < 0)
        return NULL;
    return elf_getdata(scn, NULL);
}

static bool find_sections(Dwarf *dw, struct sections *out)
{
    Elf *elf = dwarf_getelf(dw);
    size_t names;
    memset(out, 0, sizeof *out);
    if (elf == NULL || elf_getshdrstrndx(elf, &names) != 0)
        return false;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        Elf_Data *d = section_data(elf, names, scn, ".debug_names");
        if (d != NULL && d->d_buf != NULL) {
            out->names = d->d_buf;
            out->names_size = d->d_size;
        }
        d = section_data(elf, names, scn, ".debug_str");
        if (d != NULL && d->d_buf != NULL) {
            out->strings = d->d_buf;
            out->strings_size = d->d_size;
        }
    }
    return out->names != NULL && out->strings != NULL;
}

static bool parse_abbrevs(struct name_index *x, struct cursor c)
{
    x->abbrev_count = 0;
    for (;;) {
        uint64_t code = uleb(&c);
        if (c.bad)
            return false;
        if (code == 0)
            return true;
        if (x->abbrev_count == MAX_ABBREVS)
            return false;
        struct abbrev *a = &x->abbrevs[x->abbrev_count++];
        a->code = code;
        a->tag = uleb(&c);
        a->count = 0;
        for (;;) {
            uint64_t index = uleb(&c), form = uleb(&c);
            if (c.bad || a->count == MAX_ATTRIBUTES)
                return false;
            if (index == 0 && form == 0)
                break;
            a->attributes[a->count].index = index;
            a->attributes[a->count++].form = form;
        }
    }
}

/* Reads the header of the name index at *c; c is left at the next one. */
static bool parse_index(struct cursor *c, struct name_index *x)
{
    uint64_t length = fixed(c, 4);
    x->offset_size = 4;
    if (length == 0xffffffff) {
        length = fixed(c, 8);
        x->offset_size = 8;
    }
    if (c->bad || length > (uint64_t)(c->end - c->p))
        return false;
    struct cursor u = {c->p, c->p + length, false};
    c->p += length;
    x->end = u.end;
    uint64_t version = fixed(&u, 2);
    fixed(&u, 2); /* padding */
    x->cus = (uint32_t)fixed(&u, 4);
    x->local_tus = (uint32_t)fixed(&u, 4);
    x->foreign_tus = (uint32_t)fixed(&u, 4);
    x->buckets = (uint32_t)fixed(&u, 4);
    x->names = (uint32_t)fixed(&u, 4);
    uint64_t abbrev_size = fixed(&u, 4), augmentation = fixed(&u, 4);
    if (u.bad || version != 5 || augmentation > (uint64_t)(u.end - u.p))
        return false;
    u.p += augmentation;
    /* The lists and tables follow each other; each size is checked against what is left. */
    uint64_t sizes[] = {(uint64_t)x->cus * x->offset_size,
                        (uint64_t)x->local_tus * x->offset_size,
                        (uint64_t)x->foreign_tus * 8,
                        (uint64_t)x->buckets * 4,
                        x->buckets ? (uint64_t)x->names * 4 : 0,
                        (uint64_t)x->names * x->offset_size,
                        (uint64_t)x->names * x->offset_size,
                        abbrev_size};
    const unsigned char **starts[] = {&x->cu_list,       &x->tu_list, NULL,
                                      &x->bucket_table,  &x->hashes,  &x->string_offsets,
                                      &x->entry_offsets, NULL};
    const unsigned char *abbrevs = NULL;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i] > (uint64_t)(u.end - u.p))
            return false;
        if (starts[i] != NULL)
            *starts[i] = u.p;
        if (i == 7)
            abbrevs = u.p;
        u.p += sizes[i];
    }
    x->pool = u.p;
    return parse_abbrevs(x, (struct cursor){abbrevs, abbrevs + abbrev_size, false});
}

static uint32_t folded_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        h = h * 33 + (ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    }
    return h;
}

static bool is_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return false;
    return true;
}

static uint64_t read_offset(const struct name_index *x, const unsigned char *table, uint32_t i)
{
    struct cursor c = {table + (size_t)i * x->offset_size, x->end, false};
    return fixed(&c, x->offset_size);
}

static bool name_is(const struct name_index *x, const struct sections *s, uint32_t i,
                    const char *name)
{
    uint64_t at = read_offset(x, x->string_offsets, i);
    size_t length = strlen(name);
    return at < s->strings_size && s->strings_size - at > length &&
           memcmp(s->strings + at, name, length + 1) == 0;
}

/* The 0-based slot of name in the index, or -1. */
static int64_t find_name(const struct name_index *x, const struct sections *s, const char *name)
{
    if (x->buckets == 0 || !is_ascii(name)) { /* no hash table, or one folded beyond ASCII */
        for (uint32_t i = 0; i < x->names; i++)
            if (name_is(x, s, i, name))
                return i;
        return -1;
    }
    uint32_t hash = folded_hash(name), bucket = hash % x->buckets;
    struct cursor b = {x->bucket_table + 4 * (size_t)bucket, x->end, false};
    uint32_t i = (uint32_t)fixed(&b, 4); /* 1-based; 0: an empty bucket */
    for (; i != 0 && i <= x->names; i++) {
        struct cursor h = {x->hashes + 4 * (size_t)(i - 1), x->end, false};
        uint32_t other = (uint32_t)fixed(&h, 4);
        if (other % x->buckets != bucket)
            break;
        if (other == hash && name_is(x, s, i - 1, name))
            return i - 1;
    }
    return -1;
}

static uint64_t form_value(struct cursor *c, uint64_t form, unsigned offset_size)
{
    switch (form) {
    case DW_FORM_flag_present:
        return 1;
    case DW_FORM_data1:
    case DW_FORM_ref1:
    case DW_FORM_flag:
        return fixed(c, 1);
    case DW_FORM_data2:
    case DW_FORM_ref2:
        return fixed(c, 2);
    case DW_FORM_data4:
    case DW_FORM_ref4:
        return fixed(c, 4);
    case DW_FORM_data8:
    case DW_FORM_ref8:
    case DW_FORM_ref_sig8:
        return fixed(c, 8);
    case DW_FORM_udata:
    case DW_FORM_ref_udata:
        return uleb(c);
    case DW_FORM_sdata:
        return uleb(c); /* only skipped */
    case DW_FORM_sec_offset:
        return fixed(c, offset_size);
    default:
        c->bad = true;
        return 0;
    }
}

static bool add_unit(uint64_t unit, uint64_t *units, size_t *n, size_t max)
{
    for (size_t i = 0; i < *n; i++)
        if (units[i] == unit)
            return true;
    if (*n == max)
        return false;
    units[(*n)++] = unit;
    return true;
}

/* Adds the units of the aggregate entries of slot i; false when damaged, in a foreign type unit
 * or past max. *found says whether there was one. */
static bool entries_of(const struct name_index *x, uint32_t i, uint64_t *units, size_t *n,
                       size_t max, bool *found)
{
    uint64_t at = read_offset(x, x->entry_offsets, i);
    if (at >= (uint64_t)(x->end - x->pool))
        return false;
    struct cursor c = {x->pool + at, x->end, false};
    for (;;) {
        uint64_t code = uleb(&c);
        if (c.bad)
            return false;
        if (code == 0)
            return true;
        const struct abbrev *a = NULL;
        for (size_t k = 0; k < x->abbrev_count && a == NULL; k++)
            if (x->abbrevs[k].code == code)
                a = &x->abbrevs[k];
        if (a == NULL)
            return false;
        uint64_t cu = x->cus == 1 && x->local_tus + x->foreign_tus == 0 ? 0 : UINT64_MAX;
        uint64_t tu = UINT64_MAX;
        for (size_t k = 0; k < a->count; k++) {
            uint64_t v = form_value(&c, a->attributes[k].form, x->offset_size);
            if (a->attributes[k].index == IDX_COMPILE_UNIT)
                cu = v;
            else if (a->attributes[k].index == IDX_TYPE_UNIT)
                tu = v;
        }
        if (c.bad)
            return false;
        if (!is_aggregate_tag(a->tag))
            continue;
        uint64_t unit;
        if (tu != UINT64_MAX && tu < x->local_tus)
            unit = read_offset(x, x->tu_list, (uint32_t)tu);
        else if (tu == UINT64_MAX && cu < x->cus)
            unit = read_offset(x, x->cu_list, (uint32_t)cu);
        else
            return false; /* a foreign type unit (in a .dwo), or no unit */
        if (!add_unit(unit, units, n, max))
            return false;
        *found = true;
    }
}

/* Adds the units defining name in every name index; false when the index cannot answer. */
static bool units_of(const struct sections *s, const char *name, uint64_t *units, size_t *n,
                     size_t max, bool *found)
{
    struct cursor c = {s->names, s->names + s->names_size, false};
    while (c.p < c.end) {
        struct name_index x;
        if (!parse_index(&c, &x))
            return false;
        int64_t slot = find_name(&x, s, name);
        if (slot >= 0 && !entries_of(&x, (uint32_t)slot, units, n, max, found))
            return false;
    }
    return true;
}

size_t probe_debug_names_units(Dwarf *dw, const char *const *names, size_t count, uint64_t *units,
                               size_t max)
{
    struct sections s;
    if (count == 0 || !find_sections(dw, &s))
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        const char *last = probe_cxx_last_component(names[i]);
        bool found = false;
        if (strpbrk(names[i], "*?[") != NULL || !units_of(&s, names[i], units, &n, max, &found) ||
            (last != names[i] && !units_of(&s, last, units, &n, max, &found)) || !found)
            return 0;
    }
    return n;
}
