/* Sizes and alignments of DWARF types as the x86-64 ABI gives them (with the Itanium C++ ABI for
 * pointers to members); the attributes they are read from are attributes.c's. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdint.h>
#include <stdlib.h>

#include "probe_measuring.h"

/* Definitions of the classes a unit only declares, for the read under way (read_units): in the
 * binary's other units, else in the libraries it needs. */
static _Thread_local struct type_defs *definitions;
static _Thread_local struct library_defs *libraries;
/* The definitions defined() looks in: those of the read under way, or none (NULL). */
void probe_measure_use_definitions(struct type_defs *defs, struct library_defs *libs)
{
    definitions = defs;
    libraries = libs;
}

/* A class this unit only declares: its definition in another unit (type_defs.c) or in a library
 * (library_defs.c), else itself. */
Dwarf_Die *probe_defined(Dwarf_Die *die)
{
    Dwarf_Die def;
    if (definitions != NULL && is_aggregate_tag(dwarf_tag(die)) &&
        dwarf_hasattr(die, DW_AT_declaration) &&
        (probe_type_defs_find(definitions, die, &def) ||
         probe_library_defs_find(libraries, die, &def)))
        *die = def;
    return die;
}

const char *probe_defined_in(Dwarf_Die *def)
{
    return probe_library_defs_source(libraries, def);
}

/* The class (or union) a type is, or holds an array of, qualifiers and typedefs aside, when it
 * is only declared and defined nowhere: its size is not known. */
bool probe_undefined_class(Dwarf_Die *type, Dwarf_Die *cls)
{
    for (int i = 0; i < 16; i++) {
        if (probe_checked_peel_type(type, cls) != 0)
            return false;
        probe_defined(probe_resolve_signature(cls));
        if (dwarf_tag(cls) != DW_TAG_array_type)
            return is_aggregate_tag(dwarf_tag(cls)) && dwarf_hasattr(cls, DW_AT_declaration);
        if (probe_type_of(cls, cls) == NULL)
            return false;
        type = cls;
    }
    return false;
}

struct align_slot {
    const void *die;
    uint64_t align;
    bool unknown;
};

static uint64_t derive_align(struct align_cache *cache, Dwarf_Die *die, int depth, bool *unknown);

/* Alignment of a type: DW_AT_alignment when given, else what the x86-64 ABI derives; *unknown
 * set when that rests on a class only declared (then it is the least the rest allows). */
static uint64_t type_align_of(struct align_cache *cache, Dwarf_Die *die, int depth, bool *unknown)
{
    if (!die_table_room(&cache->slots, sizeof(struct align_slot)))
        return derive_align(cache, die, depth, unknown);
    struct align_slot *slot = die_table_slot(&cache->slots, die->addr);
    if (slot->die != NULL) {
        *unknown |= slot->unknown;
        return slot->align;
    }
    bool own = false;
    uint64_t align = derive_align(cache, die, depth, &own);
    *unknown |= own;
    /* The slot may have moved while deriving (the cache grows): look it up again. */
    if (!die_table_room(&cache->slots, sizeof(struct align_slot)))
        return align;
    slot = die_table_slot(&cache->slots, die->addr);
    if (slot->die == NULL) {
        *slot = (struct align_slot){die->addr, align, own};
        cache->slots.count++;
    }
    return align;
}

uint64_t probe_type_align(struct align_cache *cache, Dwarf_Die *die, int depth)
{
    bool unknown = false;
    return type_align_of(cache, die, depth, &unknown);
}

/* A static data member (DW_AT_external, or DW_AT_declaration when it has internal linkage, in
 * an anonymous namespace) takes no room in its class. */
bool probe_is_static_member(Dwarf_Die *member)
{
    return dwarf_hasattr(member, DW_AT_external) || dwarf_hasattr(member, DW_AT_declaration);
}

static uint64_t lowest_bit(uint64_t n)
{
    return n & (~n + 1);
}

/* A struct's alignment: the largest of its members' (*natural), lowered when the offsets of its
 * members or its size show it packed (__attribute__((packed)), #pragma pack(N)): then it is the
 * largest power of two that the offset of every misaligned member and the size are multiples
 * of (pack(4) { char c; double d; } has d at 4 and size 12: alignment 4). A member whose
 * alignment is unknown (its class only declared) has one that divides its offset and the size:
 * when the others' reach that bound, it is the alignment; else *unknown is set, and the
 * alignment returned is the least it can be. */
uint64_t probe_aggregate_align(struct align_cache *cache, Dwarf_Die *die, int depth,
                               uint64_t *natural, bool *unknown)
{
    uint64_t max = 1, limit = UINT64_MAX, bound = UINT64_MAX;
    Dwarf_Word size = 0, offset;
    Dwarf_Die child, inner;
    bool any_unknown = false;
    *natural = 1;
    if (probe_checked_child(die, &child) != 0)
        return 1;
    do {
        int tag = dwarf_tag(&child);
        if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) || probe_is_static_member(&child) ||
            !probe_type_of(&child, &inner))
            continue;
        Dwarf_Word own; /* alignas on the member: clang says it there only */
        bool member_unknown = false, located = probe_member_location(&child, &offset);
        uint64_t a = type_align_of(cache, &inner, depth + 1, &member_unknown);
        a = probe_udata(&child, DW_AT_alignment, &own) && own > a ? own : a;
        max = a > max ? a : max;
        if (!dwarf_hasattr(&child, DW_AT_bit_size) && located && offset % a != 0 &&
            lowest_bit(offset) < limit)
            limit = lowest_bit(offset);
        any_unknown |= member_unknown;
        if (member_unknown && located && offset > 0 && lowest_bit(offset) < bound)
            bound = lowest_bit(offset);
    } while (probe_checked_siblingof(&child, &child) == 0);
    *natural = max;
    bool sized = probe_udata(die, DW_AT_byte_size, &size) && size > 0;
    if (sized && size % max != 0 && lowest_bit(size) < limit)
        limit = lowest_bit(size);
    if (sized && lowest_bit(size) < bound)
        bound = lowest_bit(size);
    uint64_t align = max < limit ? max : limit;
    *unknown |= any_unknown && align < bound;
    return align;
}

static uint64_t derive_align(struct align_cache *cache, Dwarf_Die *die, int depth, bool *unknown)
{
    Dwarf_Word align;
    if (probe_udata(die, DW_AT_alignment, &align))
        return align;
    if (depth > 32)
        return 1;
    Dwarf_Die peeled, inner;
    if (probe_checked_peel_type(die, &peeled) != 0)
        return 1;
    probe_defined(probe_resolve_signature(&peeled));
    if (probe_udata(&peeled, DW_AT_alignment, &align))
        return align;
    switch (dwarf_tag(&peeled)) {
    case DW_TAG_array_type:
        return probe_type_of(&peeled, &inner) ? type_align_of(cache, &inner, depth + 1, unknown)
                                              : 1;
    case DW_TAG_structure_type:
    case DW_TAG_class_type:
    case DW_TAG_union_type: {
        uint64_t natural;
        if (dwarf_hasattr(&peeled, DW_AT_declaration)) { /* defined nowhere found */
            *unknown = true;
            return 1;
        }
        return probe_aggregate_align(cache, &peeled, depth, &natural, unknown);
    }
    case DW_TAG_ptr_to_member_type:
        return 8; /* Itanium C++ ABI 2.3: a pointer to data member or to member function */
    default: {
        Dwarf_Word size;
        if (dwarf_aggregate_size(&peeled, &size) != 0 || size == 0)
            return 1;
        uint64_t a = 1;
        while (a < size && a < 16)
            a <<= 1;
        return a;
    }
    }
}

/* Bytes of a type; arrays are counted here because libdw cannot size an array whose element is
 * a type-unit declaration. */
uint64_t probe_type_size(Dwarf_Die *die, int depth)
{
    Dwarf_Die peeled, element;
    Dwarf_Word size = 0;
    if (depth > 32 || probe_checked_peel_type(die, &peeled) != 0)
        return 0;
    probe_defined(probe_resolve_signature(&peeled));
    if (dwarf_tag(&peeled) == DW_TAG_ptr_to_member_type) {
        /* libdw cannot size these. Itanium C++ ABI 2.3: an offset (8 bytes) for a data member,
         * a function pointer and an adjustment (16) for a member function. */
        Dwarf_Die target;
        if (probe_udata(&peeled, DW_AT_byte_size, &size))
            return size;
        return probe_type_of(&peeled, &target) && dwarf_tag(&target) == DW_TAG_subroutine_type ? 16
                                                                                               : 8;
    }
    if (dwarf_tag(&peeled) != DW_TAG_array_type) {
        dwarf_aggregate_size(&peeled, &size);
        return size;
    }
    uint64_t count = 1;
    Dwarf_Die child;
    if (probe_checked_child(&peeled, &child) == 0) {
        do {
            Dwarf_Word n = 0, upper;
            if (dwarf_tag(&child) != DW_TAG_subrange_type)
                continue;
            if (probe_udata(&child, DW_AT_count, &n))
                count *= n;
            else if (probe_udata(&child, DW_AT_upper_bound, &upper))
                count *= upper + 1;
            else
                count = 0; /* a flexible array member */
        } while (probe_checked_siblingof(&child, &child) == 0);
    }
    return probe_type_of(&peeled, &element) ? count * probe_type_size(&element, depth + 1) : 0;
}

static uint64_t measured_size(void *context, Dwarf_Die *type)
{
    (void)context;
    return probe_type_size(type, 0);
}

static uint64_t measured_align(void *context, Dwarf_Die *type)
{
    return probe_type_align(context, type, 0);
}

static bool definition_of(void *context, Dwarf_Die *decl, Dwarf_Die *def)
{
    (void)context;
    *def = *decl;
    return probe_defined(def)->addr != decl->addr;
}

struct cxx_cache *probe_cxx_of(struct align_cache *cache)
{
    if (cache->cxx == NULL) {
        struct cxx_measure measure = {measured_size, measured_align, definition_of, cache};
        cache->cxx = probe_cxx_cache_new(&measure);
    }
    return cache->cxx;
}
