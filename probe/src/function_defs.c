/* An index of the function definitions at the top of each compile unit (and in its namespaces),
 * by the hash of their linkage name, built by one walk of the units' top levels the first time a
 * type unit's copy of a closure is named. libdw's plain calls: a look-up beside the walk. */
#include "function_defs.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyed_dies.h"

static _Thread_local struct {
    Dwarf *dw;              /* the file indexed */
    struct keyed_dies defs; /* (incomplete when memory ran out: names are then the copies') */
} index_of;

void probe_function_defs_reset(void)
{
    probe_keyed_dies_free(&index_of.defs);
    memset(&index_of, 0, sizeof index_of);
}

static const char *linkage_of(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) == NULL &&
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) == NULL)
        return NULL;
    return dwarf_formstring(&attr);
}

static bool gather(Dwarf_Die *die, void *depth_arg)
{
    int depth = depth_arg ? *(int *)depth_arg : 0;
    Dwarf_Die child;
    if (depth > 16 || dwarf_child(die, &child) != 0)
        return true;
    do {
        int tag = dwarf_tag(&child), inner = depth + 1;
        const char *linkage;
        if (tag == DW_TAG_namespace && !gather(&child, &inner))
            return false;
        if (tag == DW_TAG_subprogram && dwarf_haschildren(&child) &&
            !dwarf_hasattr(&child, DW_AT_declaration) && (linkage = linkage_of(&child)) != NULL &&
            !probe_keyed_dies_add(&index_of.defs, probe_keyed_hash(linkage), &child))
            return false;
    } while (dwarf_siblingof(&child, &child) == 0);
    return true;
}

size_t probe_function_definitions(Dwarf *dw, const char *linkage, Dwarf_Die *out, size_t max)
{
    if (index_of.dw != dw) {
        probe_function_defs_reset();
        index_of.dw = dw;
        probe_each_compile_unit(dw, gather, NULL);
        probe_keyed_dies_sort(&index_of.defs);
    }
    uint64_t hash = probe_keyed_hash(linkage);
    const struct keyed_dies *k = &index_of.defs;
    size_t n = 0;
    for (size_t i = probe_keyed_dies_first(k, hash);
         i < k->count && k->items[i].key == hash && n < max; i++) {
        const char *name = linkage_of(&k->items[i].die);
        if (name != NULL && strcmp(name, linkage) == 0)
            out[n++] = k->items[i].die;
    }
    return n;
}
