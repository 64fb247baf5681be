/* The member list of a type being read (probe_measuring.h). */
#include "probe_measuring.h"

#include <stdlib.h>
#include <string.h>

bool probe_add_member(struct layout_type *t, struct layout_member m)
{
    struct layout_member *grown = realloc(t->members, (t->member_count + 1) * sizeof *grown);
    if (grown == NULL)
        return false;
    t->members = grown;
    t->members[t->member_count++] = m;
    return true;
}

bool probe_splice_members(struct layout_type *t, size_t at, struct layout_type *block)
{
    size_t n = block->member_count;
    struct layout_member *grown = realloc(t->members, (t->member_count + n) * sizeof *grown);
    if (grown == NULL)
        return false;
    memmove(grown + at + n, grown + at, (t->member_count - at) * sizeof *grown);
    memcpy(grown + at, block->members, n * sizeof *grown);
    t->members = grown;
    t->member_count += n;
    free(block->members);
    block->members = NULL;
    block->member_count = 0;
    return true;
}
