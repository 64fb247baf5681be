/* Holes between members and tail padding, in bits so that bit-fields are exact. */
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
        size_t previous = 0; /* the last member of the type itself */
        for (size_t i = 0; i < t->member_count; i++) {
            if (t->members[i].depth > 0)
                continue; /* inside a member: its own holes belong to its type */
            uint64_t start = member_start_bits(&t->members[i]);
            if (end > 0 && start > end) {
                struct layout_hole *grown = realloc(t->holes, (t->hole_count + 1) * sizeof *grown);
                if (grown != NULL) {
                    bool bit_hole = start % 8 != 0 || end % 8 != 0;
                    t->holes = grown;
                    t->holes[t->hole_count++] =
                        (struct layout_hole){previous, start - end, bit_hole};
                    if (!bit_hole) {
                        t->byte_holes++;
                        t->hole_bytes += (start - end) / 8;
                    }
                }
            }
            uint64_t e = member_end_bits(&t->members[i]);
            end = e > end ? e : end;
            previous = i;
        }
    }
    uint64_t used = (end + 7) / 8;
    t->padding = t->size > used ? t->size - used : 0;
}

/* Shell-style glob with '*' and '?' only; "::" and '<' are ordinary characters. */
bool layout_name_matches(const char *pattern, const char *name)
{
    if (*pattern == '\0')
        return *name == '\0';
    if (*pattern == '*')
        return layout_name_matches(pattern + 1, name) ||
               (*name != '\0' && layout_name_matches(pattern, name + 1));
    if (*name == '\0' || (*pattern != '?' && *pattern != *name))
        return false;
    return layout_name_matches(pattern + 1, name + 1);
}
