/* Tables keyed by a DIE's address (die_table.h). */
#include "die_table.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool probe_die_table_grow(struct die_table *t, size_t entry_size)
{
    struct die_table bigger = {NULL, entry_size, t->capacity ? 2 * t->capacity : 256, t->count};
    bigger.slots = calloc(bigger.capacity, entry_size);
    if (bigger.slots == NULL)
        return false;
    for (size_t i = 0; i < t->capacity; i++) {
        const char *entry = (const char *)t->slots + i * entry_size;
        if (die_table_key(entry) != NULL)
            memcpy(die_table_slot(&bigger, die_table_key(entry)), entry, entry_size);
    }
    free(t->slots);
    *t = bigger;
    return true;
}

void probe_die_table_free(struct die_table *t)
{
    free(t->slots);
    *t = (struct die_table){0};
}
