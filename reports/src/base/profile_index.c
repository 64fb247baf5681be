/* Small open-addressing indexes and growing arrays for the profile exports (reports_base.h). */
#include "reports_base.h"

#include <stdlib.h>
#include <string.h>

uint64_t report_index_mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull + (h >> 29);
}

uint64_t report_index_hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = report_index_mix(h, (unsigned char)*s);
    return h;
}

static bool index_grow(struct index *x)
{
    size_t capacity = x->capacity ? 2 * x->capacity : 1024;
    struct slot *slots = calloc(capacity, sizeof *slots);
    if (slots == NULL)
        return false;
    for (size_t i = 0; i < x->capacity; i++) {
        if (!x->slots[i].used)
            continue;
        size_t s = x->slots[i].hash & (capacity - 1);
        while (slots[s].used)
            s = (s + 1) & (capacity - 1);
        slots[s] = x->slots[i];
    }
    free(x->slots);
    x->slots = slots;
    x->capacity = capacity;
    return true;
}

/* The slot of the key, used or free (then to be filled by the caller); NULL when memory ran out. */
struct slot *report_index_find(struct index *x, uint64_t hash, uint64_t a, uint64_t b, uint64_t c,
                               const char *string)
{
    if (2 * (x->count + 1) > x->capacity && !index_grow(x))
        return NULL;
    size_t s = hash & (x->capacity - 1);
    for (;; s = (s + 1) & (x->capacity - 1)) {
        struct slot *slot = &x->slots[s];
        if (!slot->used)
            return slot;
        if (slot->hash != hash)
            continue;
        if (string ? strcmp(slot->string, string) == 0
                   : slot->a == a && slot->b == b && slot->c == c)
            return slot;
    }
}

void report_index_fill(struct index *x, struct slot *slot, uint64_t hash, uint64_t a, uint64_t b,
                       uint64_t c, const char *string, uint64_t value)
{
    *slot = (struct slot){hash, a, b, c, value, string, true};
    x->count++;
}
