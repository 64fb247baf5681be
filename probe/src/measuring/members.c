/* The members of one struct, class or union definition: their names, types, offsets, sizes and
 * bit positions, nested ones under --expand, into a layout_type. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/layout.h"
#include "probe_measuring.h"

/* The members of aggregate, read into t at scope; a member of class type under --expand and a
 * virtual base read in turn. */
static bool read_members(struct layout_type *t, Dwarf_Die *aggregate, struct member_scope scope);

/* A struct or union without a name, or an array of them, qualifiers aside (not through a
 * typedef, as pahole): into out, whose members text shows inline (those of the first element). */
static bool unnamed_aggregate(Dwarf_Die *type, Dwarf_Die *out)
{
    *out = *type;
    for (int i = 0;
         i < 8 && (dwarf_tag(out) == DW_TAG_const_type || dwarf_tag(out) == DW_TAG_volatile_type ||
                   dwarf_tag(out) == DW_TAG_array_type);
         i++)
        if (probe_type_of(out, out) == NULL)
            return false;
    return probe_is_aggregate_type(out) && dwarf_diename(out) == NULL;
}

/* The vtable pointer a dynamic class starts with: GCC's "_vptr.X" and clang's "_vptr$X",
 * artificial members. Its type is spelled as gdb spells it (GCC points at __vtbl_ptr_type, clang
 * at a function type): "int (**_vptr.X)(void)". */
#define VPTR_TYPE "int (**)(void)"
#define VPTR_NAME_AT 7

static bool is_vptr(Dwarf_Die *member)
{
    const char *name = dwarf_diename(member);
    return name != NULL && strncmp(name, "_vptr", 5) == 0 &&
           dwarf_hasattr(member, DW_AT_artificial);
}

/* Where the class a member's type is (or holds an array of) is defined, when not in the binary:
 * a library's debug file (probe_defined_in), or nowhere, and then its size is to be derived
 * (probe_derive_sizes). False when out of memory. */
static bool where_defined(Dwarf_Die *type, struct layout_member *m)
{
    Dwarf_Die cls = *type;
    if (probe_undefined_class(type, &cls)) {
        m->size_derived = true;
        m->type_size = 0;
        return true;
    }
    const char *source = probe_is_aggregate_type(&cls) ? probe_defined_in(&cls) : NULL;
    return source == NULL || (m->defined_in = strdup(source)) != NULL;
}

/* Rust's unsized tail (`struct Slice { inner: [u8] }`, a type of 0 bytes): rustc 1.95 gives the
 * member its element's type at the end of the 0-byte struct, rustc 1.63 makes it a bit-field of
 * 0 bits in a 1-byte unit. It is what C writes as a flexible array member, `u8 inner[]`, which
 * takes no byte of the struct: so it is spelled and sized, whichever rustc wrote it. */
static bool unsized_tail(const struct layout_type *t, Dwarf_Die *child, struct layout_member *m,
                         struct member_scope scope)
{
    Dwarf_Die cu;
    if (scope.depth != 0 || t->size != 0 || m->size == 0 || m->bit_size > 0 ||
        dwarf_diecu(child, &cu, NULL, NULL) == NULL || !probe_unit_is_rust(&cu))
        return true;
    m->bit_offset = -1;
    m->size = m->type_size = 0; /* sizeof an incomplete array: none */
    if (m->type == NULL || m->name_at != strlen(m->type))
        return true; /* (a light read has no type; a declarator other than a plain name stays) */
    size_t n = strlen(m->type) + 3;
    char *flexible = malloc(n);
    if (flexible == NULL)
        return false;
    snprintf(flexible, n, "%s[]", m->type);
    free(m->type);
    m->type = flexible;
    return true;
}

/* One DW_TAG_member or DW_TAG_inheritance child of an aggregate. */
static bool read_member(struct layout_type *t, Dwarf_Die *child, bool in_union,
                        struct member_scope scope)
{
    Dwarf_Die type;
    if (probe_type_of(child, &type) == NULL)
        return true; /* no type: nothing to lay out */
    struct layout_member m = {.bit_offset = -1, .depth = scope.depth};
    m.is_base = dwarf_tag(child) == DW_TAG_inheritance;
    m.type = scope.light && !m.is_base ? NULL : probe_type_decl(&type, &m.name_at);
    m.inline_only = !scope.expand && scope.depth > 0;
    m.artificial = is_vptr(child);
    if (m.type != NULL && m.artificial) {
        free(m.type);
        m.type = strdup(VPTR_TYPE);
        m.name_at = VPTR_NAME_AT;
    }
    Dwarf_Word access; /* DWARF's default: public in a struct, private in a class */
    if (m.is_base)
        m.access = probe_udata(child, DW_AT_accessibility, &access) ? (uint8_t)access
                   : t->kind[0] == 'c'                              ? DW_ACCESS_private
                                                                    : DW_ACCESS_public;
    const char *name = probe_checked_diename(child);
    const char *own = m.is_base ? (m.type ? m.type : "") : name ? name : "";
    /* Members of an anonymous struct or union are named as C names them: without a prefix. */
    if (scope.prefix != NULL && scope.prefix[0] != '\0') {
        size_t n = strlen(scope.prefix) + strlen(own) + 16;
        m.name = malloc(n);
        if (m.name)
            snprintf(m.name, n, "%s.%s", scope.prefix, own[0] ? own : "{anonymous}");
    } else {
        m.name = strdup(own);
    }
    Dwarf_Word size = probe_type_size(&type, 0), offset = 0, bits;
    m.size = m.type_size = size;
    if (!scope.light && !where_defined(&type, &m)) {
        free(m.type);
        return false;
    }
    uint64_t natural = scope.light ? 1 : probe_type_align(scope.aligns, &type, 0);
    if (!scope.light) {
        Dwarf_Word own = 0; /* alignas on the member */
        probe_udata(child, DW_AT_alignment, &own);
        m.align = own > natural ? own : natural;
    }
    bool located = probe_member_location(child, &offset);
    if (!located && !in_union)
        offset = 0;
    m.offset = scope.base + offset;
    /* A member at an offset its type's alignment forbids: the type is packed. */
    if (!scope.light && scope.depth == 0 && located && offset != 0 && !m.is_base &&
        !dwarf_hasattr(child, DW_AT_bit_size) && offset % natural != 0)
        t->packed = true;
    if (probe_udata(child, DW_AT_bit_size, &bits)) {
        m.bit_size = (uint32_t)bits;
        Dwarf_Word data_bit, legacy;
        if (probe_udata(child, DW_AT_data_bit_offset, &data_bit)) {
            m.bit_offset = (int64_t)data_bit;
        } else if (probe_udata(child, DW_AT_bit_offset, &legacy)) {
            Dwarf_Word storage = size;
            probe_udata(child, DW_AT_byte_size, &storage);
            /* DWARF 2/3 count from the most significant bit of the storage unit. */
            m.bit_offset = (int64_t)(offset * 8 + storage * 8 - legacy - bits);
        } else {
            m.bit_offset = (int64_t)(offset * 8);
        }
        m.bit_offset += (int64_t)scope.base * 8;
        if (size > 0)
            m.offset = (uint64_t)m.bit_offset / 8 / size * size;
    }
    if (m.name == NULL || (m.type == NULL && !scope.light) || !unsized_tail(t, child, &m, scope) ||
        !probe_add_member(t, m)) {
        free(m.name);
        free(m.type);
        free(m.defined_in);
        return false;
    }
    Dwarf_Die inner;
    /* Without --expand, only an unnamed struct or union's members are read (shown inline);
     * not those of an empty array of them (they would lie past the end). */
    if (scope.depth >= 8 || m.bit_offset >= 0 ||
        (!(!scope.light && m.size > 0 && unnamed_aggregate(&type, &inner)) &&
         (!scope.expand || probe_checked_peel_type(&type, &inner) != 0 ||
          !probe_is_aggregate_type(probe_defined(probe_resolve_signature(&inner))))))
        return true;
    struct member_scope nested = {m.offset,
                                  t->members[t->member_count - 1].name,
                                  (uint8_t)(scope.depth + 1),
                                  scope.expand,
                                  scope.aligns,
                                  scope.light,
                                  !m.is_base};
    /* The name lives in t->members, which read_members may move: pass a copy. */
    char *prefix = strdup(nested.prefix);
    if (prefix == NULL)
        return false;
    nested.prefix = prefix;
    bool ok = read_members(t, &inner, nested);
    free(prefix);
    return ok;
}

/* A Rust enum's variants (DW_TAG_variant_part): one at a time in the same bytes, each a member of
 * its own struct type, and the artificial member the discriminant is read from (often inside a
 * variant's bytes: a niche). Laid out as pahole shows an unnamed union: one member "union {...}"
 * that covers them all, whose members are the discriminant and the variants. Without it the
 * enum's bytes would read as padding. */
#define VARIANT_PART_TYPE "union {...}"
#define DISCRIMINANT_NAME "<discriminant>"

static bool read_variant(struct layout_type *t, Dwarf_Die *variant, struct member_scope inner)
{
    Dwarf_Die child;
    if (probe_checked_child(variant, &child) != 0)
        return true;
    do
        if (dwarf_tag(&child) == DW_TAG_member && !read_member(t, &child, true, inner))
            return false;
    while (probe_checked_siblingof(&child, &child) == 0);
    return true;
}

static bool read_variant_part(struct layout_type *t, Dwarf_Die *part, struct member_scope scope)
{
    size_t at = t->member_count;
    struct layout_member u = {.name = strdup(""),
                              .type = scope.light ? NULL : strdup(VARIANT_PART_TYPE),
                              .name_at = strlen(VARIANT_PART_TYPE),
                              .offset = scope.base,
                              .bit_offset = -1,
                              .depth = scope.depth,
                              .inline_only = !scope.expand && scope.depth > 0,
                              .variant_part = true};
    if (u.name == NULL || (u.type == NULL && !scope.light) || !probe_add_member(t, u)) {
        free(u.name);
        free(u.type);
        return false;
    }
    struct member_scope inner = scope;
    inner.prefix = t->members[at].name; /* "": the variants are named as they are */
    inner.depth++;
    Dwarf_Die child;
    if (scope.depth < 8 && probe_checked_child(part, &child) == 0) {
        do {
            int tag = dwarf_tag(&child);
            size_t before = t->member_count;
            if (tag == DW_TAG_member && !read_member(t, &child, true, inner))
                return false;
            if (tag == DW_TAG_member && t->member_count > before &&
                t->members[before].name[0] == '\0') {
                free(t->members[before].name);
                if ((t->members[before].name = strdup(DISCRIMINANT_NAME)) == NULL)
                    return false;
            }
            if (tag == DW_TAG_variant && !read_variant(t, &child, inner))
                return false;
        } while (probe_checked_siblingof(&child, &child) == 0);
    }
    uint64_t end = scope.base; /* the union covers its members */
    for (size_t i = at + 1; i < t->member_count; i++)
        if (t->members[i].depth == inner.depth && t->members[i].offset + t->members[i].size > end)
            end = t->members[i].offset + t->members[i].size;
    t->members[at].size = t->members[at].type_size = end - scope.base;
    return true;
}

static bool read_members(struct layout_type *t, Dwarf_Die *aggregate, struct member_scope scope)
{
    Dwarf_Die child;
    bool in_union = dwarf_tag(aggregate) == DW_TAG_union_type;
    if (probe_checked_child(aggregate, &child) != 0)
        return true;
    size_t first = t->member_count;
    bool bases = false;
    do {
        int ctag = dwarf_tag(&child);
        probe_checked_aggregate_child(&child, ctag); /* a damaged tag makes a member vanish */
        bases |= ctag == DW_TAG_inheritance;
        /* Virtual bases are placed in the complete object (probe_add_virtual_bases). */
        if ((ctag == DW_TAG_member && !probe_is_static_member(&child)) ||
            (ctag == DW_TAG_inheritance && !probe_cxx_is_virtual_inheritance(&child)))
            if (!read_member(t, &child, in_union, scope))
                return false;
        if (ctag == DW_TAG_variant_part && !read_variant_part(t, &child, scope))
            return false;
    } while (probe_checked_siblingof(&child, &child) == 0);
    if (bases && scope.complete &&
        !probe_add_virtual_bases(t, aggregate, first, scope, read_members))
        return false;
    if (scope.light)
        return true;
    probe_derive_sizes(t, aggregate, first, scope);
    if (in_union || (!bases && !probe_any_overlap(t, first, scope.depth)))
        return true;
    return probe_settle_sizes(t, aggregate, first, scope);
}

/* Whether a base of t is of a class whose layout rests on a class only declared
 * (probe_cxx_base_unknown): its virtual bases may then lie, unplaced, in the tail of t. */
static bool rests_on_unknown_base(struct align_cache *cache, Dwarf_Die *die,
                                  const struct layout_type *t)
{
    bool bases = false;
    for (size_t i = 0; i < t->member_count && !bases; i++)
        bases = t->members[i].is_base && t->members[i].depth == 0;
    struct cxx_cache *cxx = bases ? probe_cxx_of(cache) : NULL;
    return cxx != NULL && probe_cxx_base_unknown(cxx, die);
}

/* An aggregate definition into a layout_type (members in DWARF order). A light read fills only
 * what same_definition compares (size, member names, offsets, bit positions): enough to tell a
 * definition met again in another unit, which is most of them, at a fraction of the cost. */
bool probe_read_aggregate(struct align_cache *cache, Dwarf_Die *die, const char *name, bool expand,
                          bool light, struct layout_type *t)
{
    memset(t, 0, sizeof *t);
    int tag = dwarf_tag(die);
    t->kind = tag == DW_TAG_class_type ? "class" : tag == DW_TAG_union_type ? "union" : "struct";
    t->name = strdup(name);
    Dwarf_Word size = 0, align;
    if (dwarf_aggregate_size(die, &size) != 0)
        probe_udata(die, DW_AT_byte_size, &size);
    t->size = size;
    if (!read_members(t, die, (struct member_scope){0, NULL, 0, expand, cache, light, true}))
        return false;
    if (light)
        return t->name != NULL;
    uint64_t natural = 1; /* stays 1 when DW_AT_alignment says it */
    t->align_from_dwarf = probe_udata(die, DW_AT_alignment, &align);
    t->align = t->align_from_dwarf
                   ? align
                   : probe_aggregate_align(cache, die, 0, &natural, &t->align_unknown);
    t->packed |= t->align < natural;
    layout_find_holes(t);
    t->padding_unknown = t->padding > 0 && rests_on_unknown_base(cache, die, t);
    return t->name != NULL;
}
