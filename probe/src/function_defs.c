/* An index of the function definitions at the top of each compile unit (and in its namespaces),
 * by the hash of their linkage name, built by one walk of the units' top levels the first time a
 * type unit's copy of a closure is named. libdw's plain calls: a look-up beside the walk. */
#include "function_defs.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct def {
    uint64_t hash;
    Dwarf_Die die;
};

static _Thread_local struct {
    Dwarf *dw; /* the file indexed */
    struct def *defs;
    size_t count, capacity;
} index_of;

void function_defs_reset(void)
{
    free(index_of.defs);
    memset(&index_of, 0, sizeof index_of);
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
    return h;
}

static const char *linkage_of(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) == NULL &&
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) == NULL)
        return NULL;
    return dwarf_formstring(&attr);
}

static bool add(Dwarf_Die *die, const char *linkage)
{
    if (index_of.count == index_of.capacity) {
        size_t capacity = index_of.capacity ? 2 * index_of.capacity : 1024;
        struct def *grown = realloc(index_of.defs, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        index_of.defs = grown;
        index_of.capacity = capacity;
    }
    index_of.defs[index_of.count++] = (struct def){hash_name(linkage), *die};
    return true;
}

static bool gather(Dwarf_Die *die, int depth)
{
    Dwarf_Die child;
    if (depth > 16 || dwarf_child(die, &child) != 0)
        return true;
    do {
        int tag = dwarf_tag(&child);
        const char *linkage;
        if (tag == DW_TAG_namespace && !gather(&child, depth + 1))
            return false;
        if (tag == DW_TAG_subprogram && dwarf_haschildren(&child) &&
            !dwarf_hasattr(&child, DW_AT_declaration) && (linkage = linkage_of(&child)) != NULL &&
            !add(&child, linkage))
            return false;
    } while (dwarf_siblingof(&child, &child) == 0);
    return true;
}

static int by_hash(const void *a, const void *b)
{
    uint64_t x = ((const struct def *)a)->hash, y = ((const struct def *)b)->hash;
    return x < y ? -1 : x > y;
}

static bool build(Dwarf *dw)
{
    function_defs_reset();
    index_of.dw = dw;
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t unit_type;
    Dwarf_Die cudie, subdie;
    while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
        if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
            continue;
        Dwarf_Die *root =
            unit_type == DW_UT_skeleton && dwarf_tag(&subdie) != DW_TAG_invalid ? &subdie : &cudie;
        if (!gather(root, 0))
            return false;
    }
    qsort(index_of.defs, index_of.count, sizeof *index_of.defs, by_hash);
    return true;
}

size_t function_definitions(Dwarf *dw, const char *linkage, Dwarf_Die *out, size_t max)
{
    if (index_of.dw != dw && !build(dw))
        return 0;
    uint64_t hash = hash_name(linkage);
    size_t lo = 0, hi = index_of.count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (index_of.defs[mid].hash < hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    for (size_t i = lo; i < index_of.count && index_of.defs[i].hash == hash && n < max; i++) {
        const char *name = linkage_of(&index_of.defs[i].die);
        if (name != NULL && strcmp(name, linkage) == 0)
            out[n++] = index_of.defs[i].die;
    }
    return n;
}
