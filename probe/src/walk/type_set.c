/* The types kept from every unit: one per definition, those met again in other units dropped, a
 * name defined differently in two units flagged (ODR). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "probe/layout.h"
#include "probe_walk.h"

void probe_free_type(struct layout_type *t)
{
    for (size_t i = 0; i < t->member_count; i++) {
        free(t->members[i].name);
        free(t->members[i].type);
        free(t->members[i].defined_in);
    }
    free(t->members);
    free(t->holes);
    free(t->name);
    free(t->decl_file);
}

/* The index of the next member from i that is not inline_only (a light read skips those). */
static size_t next_compared(const struct layout_type *t, size_t i)
{
    while (i < t->member_count && t->members[i].inline_only)
        i++;
    return i;
}

static bool same_definition(const struct layout_type *a, const struct layout_type *b)
{
    if (a->size != b->size)
        return false;
    size_t i = next_compared(a, 0), j = next_compared(b, 0);
    for (; i < a->member_count && j < b->member_count;
         i = next_compared(a, i + 1), j = next_compared(b, j + 1))
        if (a->members[i].offset != b->members[j].offset ||
            a->members[i].bit_offset != b->members[j].bit_offset ||
            strcmp(a->members[i].name, b->members[j].name) != 0)
            return false;
    return i == a->member_count && j == b->member_count;
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
    return h;
}

static bool seen_grow(struct seen *seen, const struct layout_set *set)
{
    size_t capacity = seen->capacity ? seen->capacity * 2 : 1024;
    size_t *slots = calloc(capacity, sizeof *slots);
    if (slots == NULL)
        return false;
    for (size_t i = 0; i < seen->capacity; i++) {
        size_t v = seen->slots[i];
        if (v == 0)
            continue;
        size_t h = hash_name(set->types[v - 1].name) & (capacity - 1);
        while (slots[h])
            h = (h + 1) & (capacity - 1);
        slots[h] = v;
    }
    free(seen->slots);
    seen->slots = slots;
    seen->capacity = capacity;
    return true;
}

/* A kept definition of t's name equal to t. */
bool probe_already_kept(const struct layout_set *set, const struct seen *seen,
                        const struct layout_type *t)
{
    if (seen->capacity == 0)
        return false;
    size_t mask = seen->capacity - 1;
    for (size_t h = hash_name(t->name) & mask; seen->slots[h]; h = (h + 1) & mask) {
        const struct layout_type *known = &set->types[seen->slots[h] - 1];
        if (strcmp(known->name, t->name) == 0 && same_definition(known, t))
            return true;
    }
    return false;
}
/* Adds t unless an identical definition is known; keeps a different one, flagging both. */
bool probe_keep(struct layout_set *set, struct seen *seen, struct layout_type *t)
{
    if ((set->count + 1) * 2 > seen->capacity && !seen_grow(seen, set))
        return false;
    size_t mask = seen->capacity - 1, h = hash_name(t->name) & mask;
    for (; seen->slots[h]; h = (h + 1) & mask) {
        struct layout_type *known = &set->types[seen->slots[h] - 1];
        if (strcmp(known->name, t->name) != 0)
            continue;
        if (same_definition(known, t)) {
            probe_free_type(t);
            return true;
        }
        if (known->unit_local || t->unit_local)
            continue; /* two units' own types that share a name */
        known->odr_conflict = true;
        t->odr_conflict = true;
    }
    if (!array_reserve(&set->types, &set->capacity, set->count + 1, sizeof *set->types))
        return false;
    set->types[set->count++] = *t;
    seen->slots[h] = set->count;
    return true;
}
