/* Scans of a unit's DIEs from their bytes (probe_reading.h): each DIE's abbreviation code, its
 * attributes stepped over by their forms' sizes (die_end.c), lists of children counted by their
 * null entries. What a scan needs of an abbreviation is asked of libdw once, at its first DIE, and
 * kept for the few units used last. */
#include "probe_reading.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"

#define MAX_CODE 65536 /* producers number abbreviations from 1 up; past this, read with libdw */
/* A walk reads one unit, and the type units its types lead into; the index of type_defs.c scans
 * every unit ahead of the walk. */
#define UNITS_KEPT 64

struct attribute {
    unsigned form;
    int size; /* its form's size, or FORM_VARIABLE (die_end.c) */
};

struct abbrev_info {
    Dwarf_Abbrev *abbrev; /* NULL: not met yet */
    int tag;
    bool children, declaration, named;
    int fixed;           /* the attributes' size when every form has one and none is
                            DW_AT_sibling; else -1 */
    size_t first, count; /* its attributes: the unit's attributes[first .. first + count) */
    size_t sibling;      /* DW_AT_sibling's place among them, or SIZE_MAX */
};

struct unit_table {
    Dwarf_CU *cu; /* NULL: a free place */
    unsigned generation;
    unsigned long used;
    const unsigned char *start, *end; /* the unit's first byte (its header) and its end */
    uint8_t address_size, offset_size;
    struct abbrev_info *abbrevs; /* by code */
    size_t abbrev_capacity;
    struct attribute *attributes;
    size_t attribute_count, attribute_capacity;
};

static _Thread_local struct {
    struct unit_table units[UNITS_KEPT];
    unsigned long clock;
    struct unit_table *last; /* the table asked for last */
} kept;

static void table_free(struct unit_table *t)
{
    free(t->abbrevs);
    free(t->attributes);
    memset(t, 0, sizeof *t);
}

void probe_die_scan_release(void)
{
    for (size_t i = 0; i < UNITS_KEPT; i++)
        table_free(&kept.units[i]);
    kept.last = NULL;
}

/* The table of die's unit: kept, or a new one in the place of the least recently used; NULL when
 * the unit's header cannot be read. */
static struct unit_table *table_of(Dwarf_Die *die)
{
    unsigned generation = probe_read_generation();
    struct unit_table *oldest = &kept.units[0];
    if (kept.last != NULL && kept.last->cu == die->cu && kept.last->generation == generation &&
        die->cu != NULL) {
        kept.last->used = ++kept.clock;
        return kept.last;
    }
    for (size_t i = 0; i < UNITS_KEPT; i++) {
        struct unit_table *t = &kept.units[i];
        if (t->cu == die->cu && t->generation == generation && die->cu != NULL) {
            t->used = ++kept.clock;
            return kept.last = t;
        }
        if (t->used < oldest->used)
            oldest = t;
    }
    table_free(oldest);
    kept.last = NULL;
    Dwarf_Die unit;
    struct unit_table *t = oldest;
    if (die->cu == NULL || dwarf_diecu(die, &unit, &t->address_size, &t->offset_size) == NULL ||
        (t->end = probe_unit_end(die)) == NULL)
        return NULL;
    t->cu = die->cu;
    t->generation = generation;
    t->used = ++kept.clock;
    t->start = (const unsigned char *)die->addr - dwarf_cuoffset(die);
    return kept.last = t;
}

static bool add_attribute(struct unit_table *t, unsigned form, int size)
{
    if (!array_reserve(&t->attributes, &t->attribute_capacity, t->attribute_count + 1,
                       sizeof *t->attributes))
        return false;
    t->attributes[t->attribute_count++] = (struct attribute){form, size};
    return true;
}

/* What the scans keep of an abbreviation, asked of libdw through the DIE at die. (Its attributes
 * are counted here: libdw 0.188's dwarf_getattrcnt stops at an implicit constant of 0.) */
static bool describe(struct unit_table *t, const unsigned char *die, uint64_t code,
                     struct abbrev_info *a)
{
    Dwarf_Die d = {.addr = (void *)die, .cu = t->cu};
    if (dwarf_haschildren(&d) < 0 || d.abbrev == NULL || dwarf_getabbrevcode(d.abbrev) != code)
        return false;
    struct abbrev_info info = {d.abbrev,
                               (int)dwarf_getabbrevtag(d.abbrev),
                               dwarf_abbrevhaschildren(d.abbrev) == 1,
                               false,
                               false,
                               0,
                               t->attribute_count,
                               0,
                               SIZE_MAX};
    unsigned name, form;
    for (size_t i = 0; dwarf_getabbrevattr_data(d.abbrev, i, &name, &form, NULL, NULL) == 0; i++) {
        int size = probe_form_fixed_size(form, t->address_size, t->offset_size);
        if (size == FORM_UNKNOWN || !add_attribute(t, form, size))
            return false;
        info.count++;
        info.declaration |= name == DW_AT_declaration;
        info.named |= name == DW_AT_name;
        if (name == DW_AT_sibling)
            info.sibling = i;
        info.fixed = info.fixed < 0 || size < 0 || name == DW_AT_sibling ? -1 : info.fixed + size;
    }
    *a = info;
    return true;
}

static struct abbrev_info *abbrev_of(struct unit_table *t, const unsigned char *die, uint64_t code)
{
    if (code < t->abbrev_capacity && t->abbrevs[code].abbrev != NULL)
        return &t->abbrevs[code];
    if (code >= MAX_CODE || code == 0)
        return NULL;
    if (code >= t->abbrev_capacity) {
        size_t had = t->abbrev_capacity;
        if (!array_reserve(&t->abbrevs, &t->abbrev_capacity, code + 1, sizeof *t->abbrevs))
            return NULL;
        for (size_t i = had; i < t->abbrev_capacity; i++)
            t->abbrevs[i].abbrev = NULL; /* codes not described yet */
    }
    struct abbrev_info *a = &t->abbrevs[code];
    return a->abbrev != NULL || describe(t, die, code, a) ? a : NULL;
}

/* The value of a reference within the unit (DW_AT_sibling's forms) at p, as an address; NULL for
 * another form or a place outside the unit. */
static const unsigned char *unit_reference(const struct unit_table *t, unsigned form,
                                           const unsigned char *p, size_t size)
{
    unsigned long long offset = 0;
    if (form == DW_FORM_ref_udata) {
        if (!probe_leb128(&p, t->end, false, &offset))
            return NULL;
    } else if (form == DW_FORM_ref1 || form == DW_FORM_ref2 || form == DW_FORM_ref4 ||
               form == DW_FORM_ref8) {
        offset = probe_little_endian(p, size);
    } else {
        return NULL;
    }
    return offset < (uint64_t)(t->end - t->start) ? t->start + offset : NULL;
}

/* Steps p over the attributes of a DIE of abbreviation a; *sibling: where its DW_AT_sibling
 * leads, or NULL. False when a value cannot be stepped over. */
static bool step_attributes(const struct unit_table *t, const struct abbrev_info *a,
                            const unsigned char **p, const unsigned char **sibling)
{
    *sibling = NULL;
    if (a->fixed >= 0) {
        if (a->fixed > t->end - *p)
            return false;
        *p += a->fixed;
        return true;
    }
    for (size_t i = 0; i < a->count; i++) {
        const struct attribute *attribute = &t->attributes[a->first + i];
        size_t size = (size_t)attribute->size;
        if (attribute->size < 0 &&
            !probe_form_size(attribute->form, *p, t->end, t->address_size, t->offset_size, &size))
            return false;
        if (size > (size_t)(t->end - *p))
            return false;
        if (i == a->sibling)
            *sibling = unit_reference(t, attribute->form, *p, size);
        *p += size;
    }
    return true;
}

/* The DIEs from p on, to the null entry that ends the list p is in (*end); visit (NULL: none)
 * sees that list's DIEs and the children it asks for. */
static enum die_scan_result scan_dies(struct unit_table *t, const unsigned char *p,
                                      enum die_scan_step (*visit)(const struct die_scanned *die,
                                                                  void *arg),
                                      void *arg, const unsigned char **end)
{
    size_t depth = 0;                        /* lists open below the first one */
    size_t unvisited = visit ? SIZE_MAX : 0; /* DIEs this deep or deeper are not visited */
    while (p < t->end) {
        const unsigned char *at = p, *sibling;
        unsigned long long code;
        if (!probe_leb128(&p, t->end, false, &code))
            return DIE_SCAN_UNREADABLE;
        if (code == 0) { /* a list ends */
            if (depth == 0) {
                *end = at;
                return DIE_SCAN_DONE;
            }
            if (--depth < unvisited && visit != NULL)
                unvisited = SIZE_MAX;
            continue;
        }
        const struct abbrev_info *a = abbrev_of(t, at, code);
        if (a == NULL || !step_attributes(t, a, &p, &sibling) || (sibling && sibling < p))
            return DIE_SCAN_UNREADABLE;
        enum die_scan_step step = DIE_SCAN_OVER;
        if (depth < unvisited) {
            struct die_scanned d = {
                {(void *)at, t->cu, a->abbrev, 0}, a->tag, a->declaration, a->named};
            step = visit(&d, arg);
            if (step == DIE_SCAN_STOP)
                return DIE_SCAN_STOPPED;
        }
        if (!a->children)
            continue;
        if (step == DIE_SCAN_OVER && sibling != NULL) {
            p = sibling; /* past its children and their null entry at once */
            continue;
        }
        if (step == DIE_SCAN_OVER && depth < unvisited)
            unvisited = depth + 1;
        depth++;
    }
    *end = NULL; /* (a producer may leave the last null entries out) */
    return DIE_SCAN_DONE;
}

enum die_scan_result
probe_die_scan(Dwarf_Die *root,
               enum die_scan_step (*visit)(const struct die_scanned *die, void *arg), void *arg)
{
    Dwarf_Die first;
    const unsigned char *end;
    int rc = dwarf_child(root, &first);
    if (rc != 0)
        return rc > 0 ? DIE_SCAN_DONE : DIE_SCAN_UNREADABLE;
    struct unit_table *t = table_of(root);
    return t != NULL ? scan_dies(t, first.addr, visit, arg, &end) : DIE_SCAN_UNREADABLE;
}

const void *probe_die_after(Dwarf_Die *die, const void *children_end)
{
    struct unit_table *t = table_of(die);
    const unsigned char *p = die->addr, *sibling, *end;
    unsigned long long code;
    if (t == NULL || !probe_leb128(&p, t->end, false, &code))
        return NULL;
    const struct abbrev_info *a = abbrev_of(t, die->addr, code);
    if (a == NULL || !step_attributes(t, a, &p, &sibling))
        return NULL;
    if (a->sibling != SIZE_MAX) /* (where libdw jumps; NULL when it leads back into die) */
        return sibling != NULL && sibling >= p ? sibling : NULL;
    if (!a->children)
        return p;
    if (children_end != NULL)
        return (const unsigned char *)children_end + 1;
    return scan_dies(t, p, NULL, NULL, &end) == DIE_SCAN_DONE && end != NULL ? end + 1 : NULL;
}

void probe_die_known_abbrev(Dwarf_Die *die)
{
    struct unit_table *t = die->abbrev == NULL ? table_of(die) : NULL;
    const unsigned char *p = die->addr;
    unsigned long long code;
    if (t == NULL || !probe_leb128(&p, t->end, false, &code))
        return;
    const struct abbrev_info *a = abbrev_of(t, die->addr, code);
    if (a != NULL)
        die->abbrev = a->abbrev;
}

const void *probe_die_unit_end(Dwarf_Die *die)
{
    struct unit_table *t = table_of(die);
    return t != NULL ? t->end : NULL;
}
