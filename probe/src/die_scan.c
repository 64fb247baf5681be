/* A scan of a unit's DIEs from their bytes (die_scan.h): each DIE's abbreviation code, its
 * attributes stepped over by their forms' sizes (die_end.h), lists of children counted by their
 * null entries. Each abbreviation is asked of libdw once, at its first DIE. */
#include "die_scan.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>

#include "die_end.h"

#define MAX_CODE 65536 /* producers number abbreviations from 1 up; past this, read with libdw */

struct abbrev_info {
    Dwarf_Abbrev *abbrev; /* NULL: not met yet */
    int tag;
    bool children, declaration, named;
    size_t first, count; /* its attributes: the scan's forms[first .. first + count) */
    size_t sibling;      /* DW_AT_sibling's place among them, or SIZE_MAX */
};

struct scan {
    Dwarf_Die *root;
    const unsigned char *start, *end; /* the unit's first byte (its header) and its end */
    uint8_t address_size, offset_size;
    struct abbrev_info *abbrevs; /* by code */
    size_t abbrev_capacity;
    unsigned *forms;
    size_t form_count, form_capacity;
};

static bool read_uleb(const unsigned char **p, const unsigned char *end, uint64_t *value)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        unsigned char byte = *(*p)++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            *value = v;
            return true;
        }
    }
    return false;
}

static bool add_form(struct scan *s, unsigned form)
{
    if (s->form_count == s->form_capacity) {
        size_t capacity = s->form_capacity ? 2 * s->form_capacity : 256;
        unsigned *grown = realloc(s->forms, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        s->forms = grown;
        s->form_capacity = capacity;
    }
    s->forms[s->form_count++] = form;
    return true;
}

/* What the scan keeps of an abbreviation, asked of libdw through the DIE at die. */
static bool describe(struct scan *s, const unsigned char *die, uint64_t code, struct abbrev_info *a)
{
    Dwarf_Die d = {.addr = (void *)die, .cu = s->root->cu};
    size_t count;
    if (dwarf_haschildren(&d) < 0 || d.abbrev == NULL || dwarf_getabbrevcode(d.abbrev) != code ||
        dwarf_getattrcnt(d.abbrev, &count) != 0)
        return false;
    *a = (struct abbrev_info){d.abbrev,
                              (int)dwarf_getabbrevtag(d.abbrev),
                              dwarf_abbrevhaschildren(d.abbrev) == 1,
                              false,
                              false,
                              s->form_count,
                              count,
                              SIZE_MAX};
    for (size_t i = 0; i < count; i++) {
        unsigned name, form;
        if (dwarf_getabbrevattr_data(d.abbrev, i, &name, &form, NULL, NULL) != 0 ||
            !add_form(s, form))
            return false;
        a->declaration |= name == DW_AT_declaration;
        a->named |= name == DW_AT_name;
        if (name == DW_AT_sibling)
            a->sibling = i;
    }
    return true;
}

static struct abbrev_info *abbrev_of(struct scan *s, const unsigned char *die, uint64_t code)
{
    if (code >= MAX_CODE)
        return NULL;
    if (code >= s->abbrev_capacity) {
        size_t capacity = s->abbrev_capacity ? s->abbrev_capacity : 512;
        while (capacity <= code)
            capacity *= 2;
        struct abbrev_info *grown = realloc(s->abbrevs, capacity * sizeof *grown);
        if (grown == NULL)
            return NULL;
        for (size_t i = s->abbrev_capacity; i < capacity; i++)
            grown[i].abbrev = NULL;
        s->abbrevs = grown;
        s->abbrev_capacity = capacity;
    }
    struct abbrev_info *a = &s->abbrevs[code];
    return a->abbrev != NULL || describe(s, die, code, a) ? a : NULL;
}

/* The value of a reference within the unit (DW_AT_sibling's forms) at p, as an address; NULL for
 * another form. */
static const unsigned char *unit_reference(const struct scan *s, unsigned form,
                                           const unsigned char *p, size_t size)
{
    uint64_t offset = 0;
    if (form == DW_FORM_ref_udata) {
        if (!read_uleb(&p, s->end, &offset))
            return NULL;
    } else if (form == DW_FORM_ref1 || form == DW_FORM_ref2 || form == DW_FORM_ref4 ||
               form == DW_FORM_ref8) {
        for (size_t i = size; i-- > 0;)
            offset = offset << 8 | p[i];
    } else {
        return NULL;
    }
    return offset < (uint64_t)(s->end - s->start) ? s->start + offset : NULL;
}

/* Steps p over the attributes of a DIE of abbreviation a; *sibling: where its DW_AT_sibling
 * leads, or NULL. False when a value cannot be stepped over. */
static bool step_attributes(const struct scan *s, const struct abbrev_info *a,
                            const unsigned char **p, const unsigned char **sibling)
{
    *sibling = NULL;
    for (size_t i = 0; i < a->count; i++) {
        size_t size;
        unsigned form = s->forms[a->first + i];
        if (!probe_form_size(form, *p, s->end, s->address_size, s->offset_size, &size))
            return false;
        if (i == a->sibling)
            *sibling = unit_reference(s, form, *p, size);
        *p += size;
    }
    return true;
}

static enum die_scan_result
scan_dies(struct scan *s, const unsigned char *p,
          enum die_scan_step (*visit)(const struct die_scanned *die, void *arg), void *arg)
{
    size_t depth = 0;            /* lists open below the root's */
    size_t unvisited = SIZE_MAX; /* DIEs this deep or deeper are stepped over */
    while (p < s->end) {
        const unsigned char *at = p, *sibling;
        uint64_t code;
        if (!read_uleb(&p, s->end, &code))
            return DIE_SCAN_UNREADABLE;
        if (code == 0) { /* a list ends */
            if (depth == 0)
                return DIE_SCAN_DONE;
            if (--depth < unvisited)
                unvisited = SIZE_MAX;
            continue;
        }
        const struct abbrev_info *a = abbrev_of(s, at, code);
        if (a == NULL || !step_attributes(s, a, &p, &sibling))
            return DIE_SCAN_UNREADABLE;
        if (sibling != NULL && sibling < p)
            return DIE_SCAN_UNREADABLE;
        enum die_scan_step step = DIE_SCAN_OVER;
        if (depth < unvisited) {
            struct die_scanned d = {
                {(void *)at, s->root->cu, a->abbrev, 0}, a->tag, a->declaration, a->named};
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
    return DIE_SCAN_DONE; /* (a producer may leave the last null entries out) */
}

enum die_scan_result
probe_die_scan(Dwarf_Die *root,
               enum die_scan_step (*visit)(const struct die_scanned *die, void *arg), void *arg)
{
    Dwarf_Die first, unit;
    Dwarf_Off abbrev_offset, end;
    struct scan s = {.root = root};
    int rc = dwarf_child(root, &first);
    if (rc != 0)
        return rc > 0 ? DIE_SCAN_DONE : DIE_SCAN_UNREADABLE;
    if (dwarf_diecu(root, &unit, &s.address_size, &s.offset_size) == NULL ||
        !probe_unit_bounds(root, &abbrev_offset, &end))
        return DIE_SCAN_UNREADABLE;
    const unsigned char *base = (const unsigned char *)root->addr - dwarf_dieoffset(root);
    s.start = (const unsigned char *)root->addr - dwarf_cuoffset(root);
    s.end = base + end;
    enum die_scan_result result = scan_dies(&s, first.addr, visit, arg);
    free(s.abbrevs);
    free(s.forms);
    return result;
}
