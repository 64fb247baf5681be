/* Two indexes of the function definitions at the top of each compile unit (and in its
 * namespaces), built by one walk of the units' top levels the first time one is asked: by the
 * hash of their linkage name (a type unit's copy of a closure is named after its function's), and
 * by the declaration they complete (DW_AT_specification: a closure clang puts under an empty
 * function is named after its call operator's definition). libdw's plain calls: a look-up beside
 * the walk. */
#include "probe_naming.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local struct {
    Dwarf *dw;                    /* the file indexed */
    struct keyed_dies defs;       /* (incomplete when memory ran out: names are then the copies') */
    struct keyed_dies completing; /* by the address of the declaration they complete */
} index_of;

void probe_function_defs_reset(void)
{
    probe_keyed_dies_free(&index_of.defs);
    probe_keyed_dies_free(&index_of.completing);
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

/* The declaration a definition completes (DW_AT_specification), into out. */
static bool completed(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute attr;
    return dwarf_attr(die, DW_AT_specification, &attr) != NULL &&
           dwarf_formref_die(&attr, out) != NULL;
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
        if (tag != DW_TAG_subprogram || !dwarf_haschildren(&child) ||
            dwarf_hasattr(&child, DW_AT_declaration))
            continue;
        if ((linkage = linkage_of(&child)) != NULL &&
            !probe_keyed_dies_add(&index_of.defs, probe_keyed_hash(linkage), &child))
            return false;
        Dwarf_Die declaration;
        if (completed(&child, &declaration) &&
            !probe_keyed_dies_add(&index_of.completing, (uintptr_t)declaration.addr, &child))
            return false;
    } while (dwarf_siblingof(&child, &child) == 0);
    return true;
}

static void build(Dwarf *dw)
{
    if (index_of.dw == dw)
        return;
    probe_function_defs_reset();
    index_of.dw = dw;
    probe_each_compile_unit(dw, gather, NULL);
    probe_keyed_dies_sort(&index_of.defs);
    probe_keyed_dies_sort(&index_of.completing);
}

bool probe_function_definition_of(Dwarf_Die *declaration, Dwarf_Die *out)
{
    Dwarf *dw = dwarf_cu_getdwarf(declaration->cu);
    if (dw == NULL)
        return false;
    build(dw);
    uint64_t key = (uintptr_t)declaration->addr;
    const struct keyed_dies *k = &index_of.completing;
    Dwarf_Die target;
    for (size_t i = probe_keyed_dies_first(k, key); i < k->count && k->items[i].key == key; i++) {
        *out = k->items[i].die;
        if (completed(out, &target) && target.addr == declaration->addr)
            return true;
    }
    return false;
}

size_t probe_function_definitions(Dwarf *dw, const char *linkage, Dwarf_Die *out, size_t max)
{
    build(dw);
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
