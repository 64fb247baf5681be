/* The member order --reorganize suggests (probe/reorder.h): the type's own members (depth 0)
 * sorted by alignment, largest first, a stable sort so that equals keep their declaration order;
 * a flexible array member stays last. Only where each member is an object of known size and
 * alignment that may go anywhere: not in a union, nor with bit-fields (they share storage
 * units), C++ bases or a vtable pointer (the ABI places them), in a packed type, with a member
 * overlapped or of a type only declared, nor a Rust enum's variants. */
#include <stdlib.h>

#include "probe/reorder.h"
#include "probe_output.h"

/* Why t's members cannot simply be moved, or NULL. */
static const char *why_not(const struct layout_type *t)
{
    if (t->kind[0] == 'u')
        return "a union";
    if (t->packed)
        return "packed";
    if (t->align_unknown)
        return "a member's alignment is unknown";
    for (size_t i = 0; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        if (m->depth > 0 || m->inline_only)
            continue;
        if (m->bit_offset >= 0)
            return "bit-fields";
        if (m->is_base || m->artificial)
            return "C++ bases or a vtable pointer";
        if (m->variant_part)
            return "a Rust enum's variants";
        if (m->size_derived)
            return "a member's type is only declared";
        if (m->align == 0)
            return "the members' alignments are not known (a layout read back from JSON)";
        if (m->size != m->type_size)
            return "a member shares its bytes";
    }
    return NULL;
}

static bool flexible(const struct layout_member *m)
{
    return m->size == 0 && m->type_size == 0;
}

/* Whether m goes after before: it is less aligned (or as much, declared later: the sort is
 * stable), or a flexible array. */
static bool goes_after(const struct layout_member *m, const struct layout_member *before)
{
    return flexible(m) || (!flexible(before) && before->align >= m->align);
}

bool layout_reorganize(const struct layout_type *t, struct layout_reorganized *out)
{
    *out = (struct layout_reorganized){why_not(t), *t, false};
    struct layout_type *r = &out->type;
    r->members = NULL;
    r->member_count = 0;
    r->holes = NULL;
    r->hole_count = 0;
    if (out->not_applicable != NULL)
        return true;
    r->members = malloc((t->member_count + 1) * sizeof *r->members);
    if (r->members == NULL)
        return false;
    /* Insertion sort: stable, and a struct has tens of members. */
    for (size_t i = 0; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        if (m->depth > 0 || m->inline_only)
            continue;
        size_t j = r->member_count++;
        while (j > 0 && !goes_after(m, &r->members[j - 1])) {
            r->members[j] = r->members[j - 1];
            j--;
        }
        r->members[j] = *m;
    }
    uint64_t end = 0;
    for (size_t i = 0; i < r->member_count; i++) {
        struct layout_member *m = &r->members[i];
        m->offset = probe_round_up(end, m->align);
        end = m->offset + m->size;
    }
    r->size = probe_round_up(end, t->align);
    if (r->size == 0) /* nothing to move: an empty class keeps its 1 byte (C++), 0 in C */
        r->size = t->size;
    out->smaller = r->size < t->size;
    layout_find_holes(r);
    return true;
}

void layout_reorganized_free(struct layout_reorganized *r)
{
    free(r->type.members);
    free(r->type.holes);
    *r = (struct layout_reorganized){0};
}
