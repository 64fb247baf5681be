/* Tables keyed by a DIE's address (unique across the main file and its split units): the alignments
 * derived (type_measure.c), the classes measured (cxx_bases.c), the declarations defined
 * (type_defs.c) and the names qualified (scope_names.c). Open addressing, linear probing, at most
 * half full. An entry is any struct whose first member is its key, a const void *: NULL in an empty
 * slot. Part of the base room (probe_base.h includes it), in a header of its own because the
 * look-ups are inline. */
#ifndef PROBE_DIE_TABLE_H
#define PROBE_DIE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct die_table {
    void *slots;       /* capacity entries of entry_size bytes; NULL until the first room */
    size_t entry_size; /* set by the first die_table_room */
    size_t capacity, count;
};

bool probe_die_table_grow(struct die_table *t, size_t entry_size);

/* Room for one more entry of entry_size bytes: the table grows (its entries move, so slots found
 * before are stale) when one more would fill it past half. False out of memory. (Inline: it is
 * asked before every look-up.) */
static inline bool die_table_room(struct die_table *t, size_t entry_size)
{
    return 2 * (t->count + 1) <= t->capacity || probe_die_table_grow(t, entry_size);
}

static inline const void *die_table_key(const void *entry)
{
    const void *key;
    memcpy(&key, entry, sizeof key);
    return key;
}

/* The entry of key, or the empty slot it would take (fill it, then count++). Needs room.
 * (Inline, as the tables it replaced were: it is on the path of every member read.) */
static inline void *die_table_slot(const struct die_table *t, const void *key)
{
    size_t mask = t->capacity - 1;
    size_t h = (size_t)(((uintptr_t)key >> 3) * 0x9E3779B97F4A7C15ull >> 17);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        char *slot = (char *)t->slots + i * t->entry_size;
        const void *k = die_table_key(slot);
        if (k == key || k == NULL)
            return slot;
    }
}

void probe_die_table_free(struct die_table *t);

#endif
