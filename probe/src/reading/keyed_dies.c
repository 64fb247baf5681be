/* Sorted arrays of DIEs by key (probe_reading.h). */
#include "probe_reading.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"

bool probe_keyed_dies_add(struct keyed_dies *k, uint64_t key, Dwarf_Die *die)
{
    if (!array_reserve(&k->items, &k->capacity, k->count + 1, sizeof *k->items))
        return false;
    k->items[k->count++] = (struct keyed_die){key, *die};
    return true;
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = ((const struct keyed_die *)a)->key, y = ((const struct keyed_die *)b)->key;
    return x < y ? -1 : x > y;
}

void probe_keyed_dies_sort(struct keyed_dies *k)
{
    if (k->count > 1)
        qsort(k->items, k->count, sizeof *k->items, by_key);
}

size_t probe_keyed_dies_first(const struct keyed_dies *k, uint64_t key)
{
    size_t lo = 0, hi = k->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->items[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void probe_keyed_dies_free(struct keyed_dies *k)
{
    free(k->items);
    memset(k, 0, sizeof *k);
}

uint64_t probe_keyed_hash_n(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (n-- > 0)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
    return h;
}

uint64_t probe_keyed_hash(const char *s)
{
    return probe_keyed_hash_n(s, strlen(s));
}

bool probe_each_compile_unit(Dwarf *dw, bool (*visit)(Dwarf_Die *root, void *arg), void *arg)
{
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t unit_type;
    Dwarf_Die cudie, subdie;
    while (dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
        if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
            continue;
        Dwarf_Die *root =
            unit_type == DW_UT_skeleton && dwarf_tag(&subdie) != DW_TAG_invalid ? &subdie : &cudie;
        if (!visit(root, arg))
            return false;
    }
    return true;
}
