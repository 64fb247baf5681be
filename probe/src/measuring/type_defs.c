/* Class definitions of the units indexed by their own identifier (DW_AT_name up to its template
 * arguments, which producers spell each their own way), gathered by a walk through the
 * namespaces and classes of each unit, a batch of units at a time as declarations are looked up
 * and not found in the units indexed so far; the few candidates of a name are then told apart by
 * their qualified names (scope_names.c). A unit is read from its bytes (die_scan.c), with libdw
 * where that cannot be done. */
#include "probe_measuring.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct found {
    const void *decl; /* NULL: an empty slot */
    bool ok;
    Dwarf_Die def;
};

struct type_defs {
    Dwarf *dw;
    Dwarf_CU *cu;           /* the last unit indexed (NULL: none yet) */
    bool all;               /* every unit is indexed */
    size_t batch;           /* how many units the next extension indexes */
    bool failed;            /* out of memory while indexing */
    struct keyed_dies defs; /* by the hash of their identifier, sorted after each extension */
    struct die_table found; /* of struct found: look-ups already answered, by declaration */
};

struct type_defs *probe_type_defs_new(Dwarf *dw)
{
    struct type_defs *d = calloc(1, sizeof *d);
    if (d != NULL)
        d->dw = dw;
    return d;
}

void probe_type_defs_free(struct type_defs *d)
{
    if (d == NULL)
        return;
    probe_keyed_dies_free(&d->defs);
    probe_die_table_free(&d->found);
    free(d);
}

/* The identifier of a class's own name: "Ring" of "Ring<int, 3>" (DW_AT_name) and of
 * "Ring<int, 3ul>" (the last component of its canonical name, cxx_names.c). */
static size_t identifier_length(const char *name)
{
    return strcspn(name, "<");
}

static uint64_t hash_name(const char *s)
{
    return probe_keyed_hash_n(s, identifier_length(s));
}

/* The named class definitions under die: in namespaces, and in class declarations (a type unit
 * holds a nested class inside a declaration of its outer class). Not inside class definitions:
 * walking their members is most of the cost, and the few nested classes wanted are looked up
 * in their outer class when asked for (nested_search). (libdw's own calls: the layout walk
 * checks each unit it reads, and the checks of a unit's end look at the walk's last steps,
 * which this one must not replace.) */
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
        bool declaration = dwarf_hasattr(&child, DW_AT_declaration);
        if (is_aggregate_tag(tag) && name != NULL && !declaration &&
            !probe_keyed_dies_add(&d->defs, hash_name(name), &child))
            return false;
        if ((tag == DW_TAG_namespace || declaration) && !gather(d, &child, depth + 1))
            return false;
    } while (dwarf_siblingof(&child, &child) == 0);
    return true;
}

/* gather's choices, made from a scan of the unit's bytes (die_scan.c). */
static enum die_scan_step gathered(const struct die_scanned *scanned, void *arg)
{
    struct type_defs *d = arg;
    if (scanned->tag == DW_TAG_namespace)
        return DIE_SCAN_INTO;
    if (!is_aggregate_tag(scanned->tag))
        return DIE_SCAN_OVER;
    if (scanned->declaration)
        return DIE_SCAN_INTO;
    Dwarf_Die die = scanned->die;
    const char *name = scanned->named ? dwarf_diename(&die) : NULL;
    return name == NULL || probe_keyed_dies_add(&d->defs, hash_name(name), &die) ? DIE_SCAN_OVER
                                                                                 : DIE_SCAN_STOP;
}

/* The unit's definitions into the index: scanned, or where the scan cannot read the unit, walked
 * with libdw. False when out of memory. */
static bool index_unit(struct type_defs *d, Dwarf_Die *root)
{
    size_t before = d->defs.count;
    enum die_scan_result scanned = probe_die_scan(root, gathered, d);
    if (scanned == DIE_SCAN_DONE)
        return true;
    d->defs.count = before;
    return scanned == DIE_SCAN_UNREADABLE && gather(d, root, 0);
}

/* Indexes the next batch of units (one, then twice as many each time), so that a definition an
 * early unit holds is found without indexing the rest: libstdc++'s debug build has 181 units,
 * and std::string is defined in its first ones. False when every unit is indexed already. */
static bool extend(struct type_defs *d)
{
    Dwarf_Half version;
    uint8_t unit_type;
    Dwarf_Die cudie, subdie;
    if (d->all || d->failed)
        return false;
    d->batch = d->batch ? 2 * d->batch : 1;
    for (size_t n = 0; n < d->batch; n++) {
        if (dwarf_get_units(d->dw, d->cu, &d->cu, &version, &unit_type, &cudie, &subdie) != 0) {
            d->all = true;
            break;
        }
        Dwarf_Die *root =
            unit_type == DW_UT_skeleton && dwarf_tag(&subdie) != DW_TAG_invalid ? &subdie : &cudie;
        int lang = dwarf_srclang(root);
        if (lang >= 0 && probe_language_is_cxx((Dwarf_Word)lang) && !index_unit(d, root)) {
            d->failed = true; /* (what is indexed stays usable) */
            break;
        }
    }
    probe_keyed_dies_sort(&d->defs);
    return true;
}

static const void *unit_of(Dwarf_Die *die)
{
    Dwarf_Die root;
    return dwarf_diecu(die, &root, NULL, NULL) ? root.addr : NULL;
}

/* What a definition must be: its own identifier, its qualified name (canonical, compared as
 * probe_cxx_names_equivalent does), and for a name private to a unit (an anonymous namespace's)
 * that unit. */
struct wanted {
    const char *own, *qualified;
    const void *unit; /* NULL: any */
};

static bool is_wanted(Dwarf_Die *candidate, const struct wanted *w)
{
    const char *name = dwarf_diename(candidate);
    struct scope_name got;
    size_t length = identifier_length(w->own);
    return name != NULL && identifier_length(name) == length &&
           strncmp(name, w->own, length) == 0 && probe_scope_name_of(candidate, &got) &&
           got.name != NULL && probe_cxx_names_equivalent(got.name, w->qualified) &&
           (w->unit == NULL || unit_of(candidate) == w->unit);
}

/* The next definition of the index from *at on that is the wanted one (*at: where to go on). */
static bool indexed_next(struct type_defs *d, const struct wanted *w, size_t *at, Dwarf_Die *def)
{
    uint64_t hash = hash_name(w->own);
    const struct keyed_dies *k = &d->defs;
    for (size_t i = *at == 0 ? probe_keyed_dies_first(k, hash) : *at;
         i < k->count && k->items[i].key == hash; i++) {
        Dwarf_Die candidate = k->items[i].die;
        if (is_wanted(&candidate, w)) {
            *def = candidate;
            *at = i + 1;
            return true;
        }
    }
    return false;
}

/* The wanted class among the children of outer, a definition of its outer class (followed to
 * its type unit when the child stands for one there). */
static bool child_definition(Dwarf_Die *outer, const struct wanted *w, Dwarf_Die *def)
{
    Dwarf_Die child;
    if (dwarf_child(outer, &child) != 0)
        return false;
    do {
        Dwarf_Attribute attr;
        Dwarf_Die target = child;
        if (!is_aggregate_tag(dwarf_tag(&child)) ||
            (dwarf_attr(&child, DW_AT_signature, &attr) != NULL &&
             dwarf_formref_die(&attr, &target) == NULL))
            continue;
        if (!dwarf_hasattr(&target, DW_AT_declaration) && is_wanted(&target, w)) {
            *def = target;
            return true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* The next definition from *at on (0 at first) of the class w names: in the index, or else nested
 * in a definition of its outer class (which the index leaves out; g++ defines a nested class only
 * in the unit that emits its vtable, so each of the outer's definitions may be the one). */
static bool next_definition(struct type_defs *d, const struct wanted *w, size_t *at, Dwarf_Die *def,
                            int depth)
{
    if (*at != SIZE_MAX && indexed_next(d, w, at, def))
        return true;
    const char *last = probe_cxx_last_component(w->qualified);
    if (last == w->qualified || depth > 16 || *at != 0)
        return false;
    *at = SIZE_MAX; /* (a nested one is found once: the first outer definition holding it) */
    char *outer_name = strndup(w->qualified, (size_t)(last - w->qualified) - 2);
    if (outer_name == NULL)
        return false;
    size_t outer_at = 0;
    struct wanted outer = {probe_cxx_last_component(outer_name), outer_name, w->unit};
    Dwarf_Die found;
    bool ok = false;
    while (!ok && next_definition(d, &outer, &outer_at, &found, depth + 1))
        ok = child_definition(&found, w, def);
    free(outer_name);
    return ok;
}

/* The first definition with decl's own name and qualified name (in decl's own unit when that
 * name is private to it: an anonymous namespace's). */
static bool search(struct type_defs *d, Dwarf_Die *decl, Dwarf_Die *def)
{
    const char *own = dwarf_diename(decl);
    struct scope_name want;
    if (own == NULL || !probe_scope_name_of(decl, &want) || want.name == NULL)
        return false;
    char *qualified = strdup(want.name);
    struct wanted w = {own, qualified, want.unit_local ? unit_of(decl) : NULL};
    size_t at = 0;
    bool ok = qualified != NULL && next_definition(d, &w, &at, def, 0);
    free(qualified);
    return ok;
}

/* search in the units indexed so far, indexing more until found or none are left. */
static bool search_extending(struct type_defs *d, Dwarf_Die *decl, Dwarf_Die *def)
{
    if (d->defs.count > 0 && search(d, decl, def))
        return true;
    while (extend(d))
        if (search(d, decl, def))
            return true;
    return false;
}

bool probe_type_defs_find(struct type_defs *d, Dwarf_Die *decl, Dwarf_Die *def)
{
    if (d == NULL)
        return false;
    if (!die_table_room(&d->found, sizeof(struct found)))
        return false;
    struct found *slot = die_table_slot(&d->found, decl->addr);
    if (slot->decl == NULL) {
        struct found f = {decl->addr, false, {0}};
        f.ok = search_extending(d, decl, &f.def);
        slot = die_table_slot(&d->found, decl->addr); /* (search never adds, but stay safe) */
        *slot = f;
        d->found.count++;
    }
    if (slot->ok)
        *def = slot->def;
    return slot->ok;
}
