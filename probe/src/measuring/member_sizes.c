/* The bytes a class-type member or base really occupies where others share its tail padding or
 * its empty self, or its virtual bases lie elsewhere. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdint.h>

#include "probe/layout.h"
#include "probe_measuring.h"

/* The bytes a member takes: a bit-field only those its bits touch. */
static void byte_extent(const struct layout_member *m, uint64_t *from, uint64_t *to)
{
    if (m->bit_offset >= 0) {
        *from = (uint64_t)m->bit_offset / 8;
        *to = ((uint64_t)m->bit_offset + m->bit_size + 7) / 8;
    } else {
        *from = m->offset;
        *to = m->offset + m->size;
    }
}

/* Whether another member of member i's level takes a byte in [from, to). */
static bool taken_by_another(const struct layout_type *t, size_t i, size_t first, uint64_t from,
                             uint64_t to)
{
    for (size_t j = first; j < t->member_count; j++) {
        uint64_t a, b;
        byte_extent(&t->members[j], &a, &b);
        if (j != i && t->members[j].depth == t->members[i].depth && a < to && from < b)
            return true;
    }
    return false;
}

/* Whether some member of the level starting at first begins before the previous ones end (an
 * empty base or [[no_unique_address]] member shares bytes, or a base's tail padding is used,
 * maybe by a bit-field), compared in bits. */
bool probe_any_overlap(const struct layout_type *t, size_t first, uint8_t depth)
{
    uint64_t end = 0;
    for (size_t i = first; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        if (m->depth != depth)
            continue;
        uint64_t from = m->bit_offset >= 0 ? (uint64_t)m->bit_offset : m->offset * 8;
        uint64_t to = m->bit_offset >= 0 ? from + m->bit_size : from + m->size * 8;
        if (from < end)
            return true;
        end = to > end ? to : end;
    }
    return false;
}

/* A class-type member or base takes its sizeof, except where that is not what it occupies: an
 * empty base takes no byte (its one byte is its derived class's padding); a base with virtual
 * bases of its own takes its non-virtual size (they lie elsewhere); and a base or a member that
 * other members overlap (a [[no_unique_address]] one: DWARF does not mark them) takes the least
 * data size its class allows (probe_cxx_share_size: none for a class that could be empty, else its
 * data size), when the bytes past that hold a later member. Members pair with the DWARF entries
 * members.c's read_members read, in order. */
bool probe_settle_sizes(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                        struct member_scope scope)
{
    struct cxx_cache *cxx = probe_cxx_of(scope.aligns);
    Dwarf_Die child, type, cls;
    size_t next = first;
    if (cxx == NULL)
        return false;
    if (probe_checked_child(aggregate, &child) != 0)
        return true;
    do {
        int tag = dwarf_tag(&child);
        if (!((tag == DW_TAG_member && !probe_is_static_member(&child)) ||
              (tag == DW_TAG_inheritance && !probe_cxx_is_virtual_inheritance(&child))) ||
            probe_type_of(&child, &type) == NULL)
            continue; /* (as members.c's read_members and read_member skip them) */
        while (next < t->member_count &&
               (t->members[next].depth != scope.depth || t->members[next].is_virtual ||
                t->members[next].variant_part))
            next++;
        if (next == t->member_count)
            break;
        size_t i = next++;
        if (t->members[i].bit_offset >= 0 || t->members[i].size_derived ||
            probe_checked_peel_type(&type, &cls) != 0 ||
            !probe_is_aggregate_type(probe_defined(probe_resolve_signature(&cls))))
            continue;
        struct layout_member *m = &t->members[i];
        bool base = tag == DW_TAG_inheritance;
        if (base && probe_cxx_is_empty(cxx, &cls)) {
            m->size = 0;
            continue;
        }
        if (base && probe_cxx_has_virtual_bases(cxx, &cls))
            m->size = probe_cxx_base_size(cxx, &cls);
        uint64_t least = probe_cxx_share_size(cxx, &cls);
        if (least < m->size &&
            taken_by_another(t, i, first, m->offset + least, m->offset + m->size))
            m->size = least;
    } while (probe_checked_siblingof(&child, &child) == 0);
    return true;
}
