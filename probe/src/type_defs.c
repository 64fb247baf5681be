/* Class definitions of every unit indexed by their own name (DW_AT_name), gathered by one walk
 * through the namespaces and classes of each unit the first time a declaration is looked up;
 * the few candidates of a name are then told apart by their qualified names (scope_names.h). */
#include "type_defs.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate_tag.h"
#include "cxx_names.h"
#include "die_table.h"
#include "scope_names.h"

struct def {
    uint64_t hash; /* of the DW_AT_name */
    Dwarf_Die die;
};

struct found {
    const void *decl; /* NULL: an empty slot */
    bool ok;
    Dwarf_Die def;
};

struct type_defs {
    Dwarf *dw;
    bool built;
    struct def *defs; /* sorted by hash once built */
    size_t count, capacity;
    struct die_table found; /* of struct found: look-ups already answered, by declaration */
};

struct type_defs *type_defs_new(Dwarf *dw)
{
    struct type_defs *d = calloc(1, sizeof *d);
    if (d != NULL)
        d->dw = dw;
    return d;
}

void type_defs_free(struct type_defs *d)
{
    if (d == NULL)
        return;
    free(d->defs);
    die_table_free(&d->found);
    free(d);
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
    return h;
}

static bool add_def(struct type_defs *d, uint64_t hash, Dwarf_Die *die)
{
    if (d->count == d->capacity) {
        size_t capacity = d->capacity ? 2 * d->capacity : 1024;
        struct def *grown = realloc(d->defs, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        d->defs = grown;
        d->capacity = capacity;
    }
    d->defs[d->count++] = (struct def){hash, *die};
    return true;
}

/* The named class definitions under die: in namespaces and nested in classes. (libdw's own
 * calls: the layout walk checks each unit it reads, and the checks of a unit's end look at the
 * walk's last steps, which this one must not replace.) */
static bool gather(struct type_defs *d, Dwarf_Die *die, int depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(die, &child) != 0)
        return true;
    do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_namespace && !is_aggregate_tag(tag))
            continue;
        const char *name = dwarf_diename(&child);
        if (is_aggregate_tag(tag) && name != NULL && !dwarf_hasattr(&child, DW_AT_declaration) &&
            !add_def(d, hash_name(name), &child))
            return false;
        if (!gather(d, &child, depth + 1))
            return false;
    } while (dwarf_siblingof(&child, &child) == 0);
    return true;
}

static int by_hash(const void *a, const void *b)
{
    uint64_t x = ((const struct def *)a)->hash, y = ((const struct def *)b)->hash;
    return x < y ? -1 : x > y;
}

static bool build(struct type_defs *d)
{
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t unit_type;
    Dwarf_Die cudie, subdie;
    d->built = true;
    while (dwarf_get_units(d->dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
        Dwarf_Die *root =
            unit_type == DW_UT_skeleton && dwarf_tag(&subdie) != DW_TAG_invalid ? &subdie : &cudie;
        int lang = dwarf_srclang(root);
        if ((lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
             lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14) &&
            !gather(d, root, 0))
            return false;
    }
    qsort(d->defs, d->count, sizeof *d->defs, by_hash);
    return true;
}

static const void *unit_of(Dwarf_Die *die)
{
    Dwarf_Die root;
    return dwarf_diecu(die, &root, NULL, NULL) ? root.addr : NULL;
}

/* The first definition with decl's own name and qualified name (in decl's own unit when that
 * name is private to it: an anonymous namespace's). */
static bool search(struct type_defs *d, Dwarf_Die *decl, Dwarf_Die *def)
{
    const char *own = dwarf_diename(decl);
    struct scope_name want;
    if (own == NULL || !scope_name_of(decl, &want) || want.name == NULL)
        return false;
    char *wanted = strdup(want.name);
    bool local = want.unit_local, ok = false;
    uint64_t hash = hash_name(own);
    size_t lo = 0, hi = d->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->defs[mid].hash < hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; wanted && !ok && i < d->count && d->defs[i].hash == hash; i++) {
        Dwarf_Die candidate = d->defs[i].die;
        const char *name = dwarf_diename(&candidate);
        struct scope_name got;
        if (name == NULL || strcmp(name, own) != 0 || !scope_name_of(&candidate, &got) ||
            got.name == NULL || !cxx_names_equivalent(got.name, wanted) ||
            (local && unit_of(&candidate) != unit_of(decl)))
            continue;
        *def = candidate;
        ok = true;
    }
    free(wanted);
    return ok;
}

bool type_defs_find(struct type_defs *d, Dwarf_Die *decl, Dwarf_Die *def)
{
    if (d == NULL || (!d->built && !build(d)))
        return false;
    if (!die_table_room(&d->found, sizeof(struct found)))
        return false;
    struct found *slot = die_table_slot(&d->found, decl->addr);
    if (slot->decl == NULL) {
        struct found f = {decl->addr, false, {0}};
        f.ok = search(d, decl, &f.def);
        slot = die_table_slot(&d->found, decl->addr); /* (search never adds, but stay safe) */
        *slot = f;
        d->found.count++;
    }
    if (slot->ok)
        *def = slot->def;
    return slot->ok;
}
