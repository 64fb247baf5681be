/* What the parts of the layout reader (dwarf_reader.c) share: type measures (type_measure.c), an
 * aggregate's members (members.c, virtual_bases.c, member_sizes.c), the kept types (type_set.c). */
#ifndef PROBE_READER_H
#define PROBE_READER_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attributes.h"
#include "die_table.h"
#include "probe/layout.h"

struct cxx_cache;
struct library_defs;
struct type_defs;

/* type_measure.c: the definitions of declared classes, sizes and alignments. */
void probe_measure_use_definitions(struct type_defs *defs, struct library_defs *libs);
Dwarf_Die *probe_defined(Dwarf_Die *die);
const char *probe_defined_in(Dwarf_Die *def);
bool probe_undefined_class(Dwarf_Die *type, Dwarf_Die *cls);
bool probe_is_static_member(Dwarf_Die *member);
uint64_t probe_type_size(Dwarf_Die *die, int depth);

/* Alignments already derived, by DIE address (unique across the main file and split units): a
 * struct's alignment is the largest of its members', and without this every use of a struct
 * would walk its members again, nested structs included. */
struct align_cache {
    struct die_table slots; /* of struct align_slot (type_measure.c) */
    struct cxx_cache *cxx;  /* C++ classes' base layouts (cxx_bases.h), made on first need */
};

uint64_t probe_type_align(struct align_cache *cache, Dwarf_Die *die, int depth);
uint64_t probe_aggregate_align(struct align_cache *cache, Dwarf_Die *die, int depth,
                               uint64_t *natural, bool *unknown);
struct cxx_cache *probe_cxx_of(struct align_cache *cache);

/* members.c, virtual_bases.c, member_sizes.c, derived_sizes.c: the members of an aggregate
 * (member_list.h holds the list they build; members.c calls the three others, none calls it). */

/* Where a member goes: the offset of the aggregate it belongs to (from the start of the type
 * being laid out), its name prefix and nesting depth, and whether to descend further. */
struct member_scope {
    uint64_t base;
    const char *prefix;
    uint8_t depth;
    bool expand;
    struct align_cache *aligns;
    bool light;    /* only what same_definition compares: no type names, no alignment */
    bool complete; /* a complete object (not a base subobject): its virtual bases are listed */
};

bool probe_read_aggregate(struct align_cache *cache, Dwarf_Die *die, const char *name, bool expand,
                          bool light, struct layout_type *t);
/* virtual_bases.c: the virtual bases of a complete object among t's members from first on; a
 * base's own members, under --expand, are read by read_members (members.c's, passed down so
 * that the two files do not call each other). */
typedef bool (*probe_members_reader)(struct layout_type *t, Dwarf_Die *aggregate,
                                     struct member_scope scope);
bool probe_add_virtual_bases(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                             struct member_scope scope, probe_members_reader read_members);
bool probe_any_overlap(const struct layout_type *t, size_t first, uint8_t depth);
bool probe_settle_sizes(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                        struct member_scope scope);
void probe_derive_sizes(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                        struct member_scope scope);

/* type_set.c: the types kept, one per definition. */

/* Names seen so far -> index of their first definition: an open-addressing table. */
struct seen {
    size_t *slots; /* index + 1, 0 empty */
    size_t capacity;
};

void probe_free_type(struct layout_type *t);
bool probe_already_kept(const struct layout_set *set, const struct seen *seen,
                        const struct layout_type *t);
bool probe_keep(struct layout_set *set, struct seen *seen, struct layout_type *t);

#endif
