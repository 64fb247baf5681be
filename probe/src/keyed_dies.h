/* DIEs kept under a 64-bit key (a name's hash, a place in the source), sorted once and then
 * looked up by key: the indexes the naming of C++ types builds on first need
 * (function_defs.c, stand_ins.c). And the walk they share, over every compile unit's root. */
#ifndef PROBE_KEYED_DIES_H
#define PROBE_KEYED_DIES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct keyed_die {
    uint64_t key;
    Dwarf_Die die;
};

struct keyed_dies {
    struct keyed_die *items;
    size_t count, capacity;
};

/* False when out of memory. */
bool probe_keyed_dies_add(struct keyed_dies *k, uint64_t key, Dwarf_Die *die);
void probe_keyed_dies_sort(struct keyed_dies *k);
/* The first item with key (or the place it would take): the items with key follow it. */
size_t probe_keyed_dies_first(const struct keyed_dies *k, uint64_t key);
void probe_keyed_dies_free(struct keyed_dies *k);

/* FNV-1a of a string, or of its first n bytes: the key of a name. */
uint64_t probe_keyed_hash(const char *s);
uint64_t probe_keyed_hash_n(const char *s, size_t n);

/* Calls visit with the root DIE of every compile unit of dw (a skeleton's split unit; type units
 * left out) until it returns false; false then. */
bool probe_each_compile_unit(Dwarf *dw, bool (*visit)(Dwarf_Die *root, void *arg), void *arg);

#endif
