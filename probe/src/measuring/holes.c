/* Holes between members and tail padding, in bits so that bit-fields are exact. */
#include <stdbool.h>
#include <stdlib.h>

#include "probe/layout.h"

static uint64_t member_start_bits(const struct layout_member *m)
{
    return m->bit_offset >= 0 ? (uint64_t)m->bit_offset : m->offset * 8;
}

static uint64_t member_end_bits(const struct layout_member *m)
{
    return m->bit_offset >= 0 ? (uint64_t)m->bit_offset + m->bit_size : (m->offset + m->size) * 8;
}

/* The type's own members (depth 0) in offset order, ties in list order. DWARF lists members in
 * declaration order, which is offset order but for C++ bases: the primary base comes first in
 * the object wherever it is declared, and a virtual base may share offset 0. */
struct place {
    uint64_t start;
    size_t index;
};

static int by_start(const void *a, const void *b)
{
    const struct place *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_member(const void *a, const void *b)
{
    const struct layout_hole *x = a, *y = b;
    return x->after_member < y->after_member ? -1 : x->after_member > y->after_member;
}

static void add_hole(struct layout_type *t, size_t after, uint64_t end, uint64_t start)
{
    struct layout_hole *grown = realloc(t->holes, (t->hole_count + 1) * sizeof *grown);
    if (grown == NULL)
        return;
    bool bit_hole = start % 8 != 0 || end % 8 != 0;
    t->holes = grown;
    t->holes[t->hole_count++] = (struct layout_hole){after, start - end, bit_hole};
    if (!bit_hole) {
        t->byte_holes++;
        t->hole_bytes += (start - end) / 8;
    }
}

/* Holes between the type's own members, in offset order; returns where the last one ends. */
static uint64_t find_gaps(struct layout_type *t)
{
    struct place *order = malloc((t->member_count + 1) * sizeof *order);
    size_t n = 0;
    bool sorted = true;
    if (order == NULL)
        return 0;
    for (size_t i = 0; i < t->member_count; i++) {
        if (t->members[i].depth > 0)
            continue; /* inside a member: its own holes belong to its type */
        order[n] = (struct place){member_start_bits(&t->members[i]), i};
        sorted &= n == 0 || order[n - 1].start <= order[n].start;
        n++;
    }
    if (!sorted)
        qsort(order, n, sizeof *order, by_start);
    uint64_t end = 0;
    size_t previous = 0; /* the member a hole follows */
    for (size_t k = 0; k < n; k++) {
        const struct layout_member *m = &t->members[order[k].index];
        if (end > 0 && order[k].start > end)
            add_hole(t, previous, end, order[k].start);
        uint64_t e = member_end_bits(m);
        end = e > end ? e : end;
        previous = order[k].index;
    }
    free(order);
    /* Renderers print a hole after the member it follows, walking members in list order. */
    if (!sorted && t->hole_count > 1) /* qsort wants a non-NULL array even for none */
        qsort(t->holes, t->hole_count, sizeof *t->holes, by_member);
    return end;
}

void layout_find_holes(struct layout_type *t)
{
    free(t->holes);
    t->holes = NULL;
    t->hole_count = 0;
    t->byte_holes = 0;
    t->hole_bytes = 0;
    uint64_t end = 0;
    if (t->kind[0] == 'u') { /* a union: members overlap, only tail padding */
        for (size_t i = 0; i < t->member_count; i++) {
            uint64_t e = member_end_bits(&t->members[i]);
            end = e > end ? e : end;
        }
    } else {
        end = find_gaps(t);
    }
    uint64_t used = (end + 7) / 8;
    t->padding = t->size > used ? t->size - used : 0;
}
