/* The size of a member whose type is only declared and defined nowhere the reader looked (the
 * binary's units, the libraries it needs): the room the layout leaves it, from its offset to the
 * next member's or to the end of the aggregate. That is its size at most: it includes whatever
 * padding follows it (0 only for one at the very end: an empty class). The member is marked
 * size_derived, its size never taken for a known 0. */
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "probe/layout.h"
#include "probe_measuring.h"

/* Where a member starts, in bytes (a bit-field: the byte of its first bit). */
static uint64_t start_of(const struct layout_member *m)
{
    return m->bit_offset >= 0 ? (uint64_t)m->bit_offset / 8 : m->offset;
}

void probe_derive_sizes(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                        struct member_scope scope)
{
    Dwarf_Word size = 0;
    if (dwarf_aggregate_size(aggregate, &size) != 0)
        probe_udata(aggregate, DW_AT_byte_size, &size);
    bool in_union = dwarf_tag(aggregate) == DW_TAG_union_type;
    uint64_t end = scope.base + size;
    for (size_t i = first; i < t->member_count; i++) {
        struct layout_member *m = &t->members[i];
        if (m->depth != scope.depth || !m->size_derived)
            continue;
        uint64_t room = end;
        for (size_t j = first; j < t->member_count && !in_union; j++)
            if (t->members[j].depth == scope.depth && start_of(&t->members[j]) > m->offset &&
                start_of(&t->members[j]) < room)
                room = start_of(&t->members[j]);
        m->size = room > m->offset ? room - m->offset : 0;
    }
}
