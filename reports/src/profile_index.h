/* Deduplicating what a profile holds many times (strings, functions, locations): an
 * open-addressing index from a key of three words, or a string, to a number; and arrays that
 * grow by doubling. */
#ifndef REPORTS_PROFILE_INDEX_H
#define REPORTS_PROFILE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct slot {
    uint64_t hash, a, b, c, value;
    const char *string;
    bool used;
};

struct index {
    struct slot *slots;
    size_t capacity, count;
};

uint64_t report_index_mix(uint64_t h, uint64_t v);
uint64_t report_index_hash_string(const char *s);

/* The slot of the key (string, or a, b and c when string is NULL), used or free (then to be
 * filled by report_index_fill); NULL when memory ran out. */
struct slot *report_index_find(struct index *x, uint64_t hash, uint64_t a, uint64_t b, uint64_t c,
                               const char *string);
void report_index_fill(struct index *x, struct slot *slot, uint64_t hash, uint64_t a, uint64_t b,
                       uint64_t c, const char *string, uint64_t value);

#endif
