/* Reads struct/class/union layouts from DWARF with libdw. libdwfl opens the file and finds a
 * separate debug file (by build id under /usr/lib/debug/.build-id or by .gnu_debuglink);
 * dwarf_get_units walks every unit: compile units, DWARF 5 type units, and the split units of
 * skeletons (-gsplit-dwarf). Each unit is walked once. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe/layout.h"
#include "probe/type_match.h"
#include "cxx_bases.h"
#include "debug_names.h"
#include "dwarf_errors.h"
#include "gdb_index.h"
#include "unit_check.h"
#include "validate.h"
#include "input.h"
#include "lean_dwarf.h"
#include "scope_names.h"
#include "type_defs.h"
#include "type_names.h"
#include "decl_path.h"

static void fail(char *error, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error, size, fmt, ap);
    va_end(ap);
}

static bool udata(Dwarf_Die *die, unsigned name, Dwarf_Word *out)
{
    Dwarf_Attribute attr;
    return dwarf_attr_integrate(die, name, &attr) != NULL && dwarf_formudata(&attr, out) == 0;
}

/* DW_AT_data_member_location: a constant, or an expression that is one DW_OP_plus_uconst. */
static bool member_location(Dwarf_Die *die, Dwarf_Word *offset)
{
    Dwarf_Attribute attr;
    if (dwarf_attr(die, DW_AT_data_member_location, &attr) == NULL)
        return false;
    if (dwarf_formudata(&attr, offset) == 0)
        return true;
    Dwarf_Op *ops;
    size_t n;
    if (dwarf_getlocation(&attr, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_plus_uconst) {
        *offset = ops[0].number;
        return true;
    }
    return false;
}

/* With type units, a unit refers to a type defined elsewhere through a declaration carrying
 * DW_AT_signature: follow it to the definition. */
static Dwarf_Die *resolve_signature(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    Dwarf_Die target;
    if (dwarf_attr(die, DW_AT_signature, &attr) != NULL && checked_formref_die(&attr, &target))
        *die = target;
    return die;
}

/* Definitions of the classes a unit only declares, for the read under way (read_units). */
static _Thread_local struct type_defs *definitions;

/* A class this unit only declares: its definition in another unit (type_defs.h), else itself. */
static Dwarf_Die *defined(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    Dwarf_Die def;
    if (definitions != NULL &&
        (tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type) &&
        dwarf_hasattr(die, DW_AT_declaration) && type_defs_find(definitions, die, &def))
        *die = def;
    return die;
}

static Dwarf_Die *type_of(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(die, DW_AT_type, &attr) == NULL || !checked_formref_die(&attr, out))
        return NULL;
    return resolve_signature(out);
}

/* Alignments already derived, by DIE address (unique across the main file and split units): a
 * struct's alignment is the largest of its members', and without this every use of a struct
 * would walk its members again, nested structs included. */
struct align_cache {
    struct align_slot {
        const void *die;
        uint64_t align;
    } * slots;
    size_t capacity, used;
    struct cxx_cache *cxx; /* C++ classes' base layouts (cxx_bases.h), made on first need */
};

static struct align_slot *align_slot(struct align_cache *c, const void *die)
{
    size_t h = ((uintptr_t)die >> 3) * 0x9E3779B97F4A7C15ull >> 20;
    for (size_t i = h & (c->capacity - 1);; i = (i + 1) & (c->capacity - 1))
        if (c->slots[i].die == die || c->slots[i].die == NULL)
            return &c->slots[i];
}

static bool align_cache_grow(struct align_cache *c)
{
    struct align_cache bigger = {calloc(c->capacity ? 2 * c->capacity : 4096, sizeof *c->slots),
                                 c->capacity ? 2 * c->capacity : 4096, c->used, c->cxx};
    if (bigger.slots == NULL)
        return false;
    for (size_t i = 0; i < c->capacity; i++)
        if (c->slots[i].die != NULL)
            *align_slot(&bigger, c->slots[i].die) = c->slots[i];
    free(c->slots);
    *c = bigger;
    return true;
}

static uint64_t derive_align(struct align_cache *cache, Dwarf_Die *die, int depth);

/* Alignment of a type: DW_AT_alignment when given, else what the x86-64 ABI derives. */
static uint64_t type_align(struct align_cache *cache, Dwarf_Die *die, int depth)
{
    if (2 * (cache->used + 1) > cache->capacity && !align_cache_grow(cache))
        return derive_align(cache, die, depth);
    struct align_slot *slot = align_slot(cache, die->addr);
    if (slot->die != NULL)
        return slot->align;
    uint64_t align = derive_align(cache, die, depth);
    /* The slot may have moved while deriving (the cache grows): look it up again. */
    if (2 * (cache->used + 1) > cache->capacity && !align_cache_grow(cache))
        return align;
    slot = align_slot(cache, die->addr);
    if (slot->die == NULL) {
        *slot = (struct align_slot){die->addr, align};
        cache->used++;
    }
    return align;
}

/* A static data member (DW_AT_external, or DW_AT_declaration when it has internal linkage, in
 * an anonymous namespace) takes no room in its class. */
static bool is_static_member(Dwarf_Die *member)
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
 * of (pack(4) { char c; double d; } has d at 4 and size 12: alignment 4). */
static uint64_t aggregate_align(struct align_cache *cache, Dwarf_Die *die, int depth,
                                uint64_t *natural)
{
    uint64_t max = 1, limit = UINT64_MAX;
    Dwarf_Word size = 0, offset;
    Dwarf_Die child, inner;
    *natural = 1;
    if (checked_child(die, &child) != 0)
        return 1;
    do {
        int tag = dwarf_tag(&child);
        if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) || is_static_member(&child) ||
            !type_of(&child, &inner))
            continue;
        Dwarf_Word own; /* alignas on the member: clang says it there only */
        uint64_t a = type_align(cache, &inner, depth + 1);
        a = udata(&child, DW_AT_alignment, &own) && own > a ? own : a;
        max = a > max ? a : max;
        if (!dwarf_hasattr(&child, DW_AT_bit_size) && member_location(&child, &offset) &&
            offset % a != 0 && lowest_bit(offset) < limit)
            limit = lowest_bit(offset);
    } while (checked_siblingof(&child, &child) == 0);
    *natural = max;
    if (udata(die, DW_AT_byte_size, &size) && size > 0 && size % max != 0 &&
        lowest_bit(size) < limit)
        limit = lowest_bit(size);
    return max < limit ? max : limit;
}

static uint64_t derive_align(struct align_cache *cache, Dwarf_Die *die, int depth)
{
    Dwarf_Word align;
    if (udata(die, DW_AT_alignment, &align))
        return align;
    if (depth > 32)
        return 1;
    Dwarf_Die peeled, inner;
    if (checked_peel_type(die, &peeled) != 0)
        return 1;
    defined(resolve_signature(&peeled));
    if (udata(&peeled, DW_AT_alignment, &align))
        return align;
    switch (dwarf_tag(&peeled)) {
    case DW_TAG_array_type:
        return type_of(&peeled, &inner) ? type_align(cache, &inner, depth + 1) : 1;
    case DW_TAG_structure_type:
    case DW_TAG_class_type:
    case DW_TAG_union_type: {
        uint64_t natural;
        return aggregate_align(cache, &peeled, depth, &natural);
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
static uint64_t type_size(Dwarf_Die *die, int depth)
{
    Dwarf_Die peeled, element;
    Dwarf_Word size = 0;
    if (depth > 32 || checked_peel_type(die, &peeled) != 0)
        return 0;
    defined(resolve_signature(&peeled));
    if (dwarf_tag(&peeled) == DW_TAG_ptr_to_member_type) {
        /* libdw cannot size these. Itanium C++ ABI 2.3: an offset (8 bytes) for a data member,
         * a function pointer and an adjustment (16) for a member function. */
        Dwarf_Die target;
        if (udata(&peeled, DW_AT_byte_size, &size))
            return size;
        return type_of(&peeled, &target) && dwarf_tag(&target) == DW_TAG_subroutine_type ? 16 : 8;
    }
    if (dwarf_tag(&peeled) != DW_TAG_array_type) {
        dwarf_aggregate_size(&peeled, &size);
        return size;
    }
    uint64_t count = 1;
    Dwarf_Die child;
    if (checked_child(&peeled, &child) == 0) {
        do {
            Dwarf_Word n = 0, upper;
            if (dwarf_tag(&child) != DW_TAG_subrange_type)
                continue;
            if (udata(&child, DW_AT_count, &n))
                count *= n;
            else if (udata(&child, DW_AT_upper_bound, &upper))
                count *= upper + 1;
            else
                count = 0; /* a flexible array member */
        } while (checked_siblingof(&child, &child) == 0);
    }
    return type_of(&peeled, &element) ? count * type_size(&element, depth + 1) : 0;
}

static bool add_member(struct layout_type *t, struct layout_member m)
{
    struct layout_member *grown = realloc(t->members, (t->member_count + 1) * sizeof *grown);
    if (grown == NULL)
        return false;
    t->members = grown;
    t->members[t->member_count++] = m;
    return true;
}

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

static bool is_aggregate_type(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

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
        if (type_of(out, out) == NULL)
            return false;
    return is_aggregate_type(out) && dwarf_diename(out) == NULL;
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

/* One DW_TAG_member or DW_TAG_inheritance child of an aggregate. */
static bool read_member(struct layout_type *t, Dwarf_Die *child, bool in_union,
                        struct member_scope scope)
{
    Dwarf_Die type;
    if (type_of(child, &type) == NULL)
        return true; /* no type: nothing to lay out */
    struct layout_member m = {.bit_offset = -1, .depth = scope.depth};
    m.is_base = dwarf_tag(child) == DW_TAG_inheritance;
    m.type = scope.light && !m.is_base ? NULL : probe_type_decl(&type, &m.name_at);
    m.inline_only = !scope.expand && scope.depth > 0;
    if (m.type != NULL && is_vptr(child)) {
        free(m.type);
        m.type = strdup(VPTR_TYPE);
        m.name_at = VPTR_NAME_AT;
    }
    Dwarf_Word access; /* DWARF's default: public in a struct, private in a class */
    if (m.is_base)
        m.access = udata(child, DW_AT_accessibility, &access) ? (uint8_t)access
                   : t->kind[0] == 'c'                        ? DW_ACCESS_private
                                                              : DW_ACCESS_public;
    const char *name = checked_diename(child);
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
    Dwarf_Word size = type_size(&type, 0), offset = 0, bits;
    m.size = size;
    bool located = member_location(child, &offset);
    if (!located && !in_union)
        offset = 0;
    m.offset = scope.base + offset;
    /* A member at an offset its type's alignment forbids: the type is packed. */
    if (!scope.light && scope.depth == 0 && located && offset != 0 && !m.is_base &&
        !dwarf_hasattr(child, DW_AT_bit_size) && offset % type_align(scope.aligns, &type, 0) != 0)
        t->packed = true;
    if (udata(child, DW_AT_bit_size, &bits)) {
        m.bit_size = (uint32_t)bits;
        Dwarf_Word data_bit, legacy;
        if (udata(child, DW_AT_data_bit_offset, &data_bit)) {
            m.bit_offset = (int64_t)data_bit;
        } else if (udata(child, DW_AT_bit_offset, &legacy)) {
            Dwarf_Word storage = size;
            udata(child, DW_AT_byte_size, &storage);
            /* DWARF 2/3 count from the most significant bit of the storage unit. */
            m.bit_offset = (int64_t)(offset * 8 + storage * 8 - legacy - bits);
        } else {
            m.bit_offset = (int64_t)(offset * 8);
        }
        m.bit_offset += (int64_t)scope.base * 8;
        if (size > 0)
            m.offset = (uint64_t)m.bit_offset / 8 / size * size;
    }
    if (m.name == NULL || (m.type == NULL && !scope.light) || !add_member(t, m)) {
        free(m.name);
        free(m.type);
        return false;
    }
    Dwarf_Die inner;
    /* Without --expand, only an unnamed struct or union's members are read (shown inline);
     * not those of an empty array of them (they would lie past the end). */
    if (scope.depth >= 8 || m.bit_offset >= 0 ||
        (!(!scope.light && m.size > 0 && unnamed_aggregate(&type, &inner)) &&
         (!scope.expand || checked_peel_type(&type, &inner) != 0 ||
          !is_aggregate_type(defined(resolve_signature(&inner))))))
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

static uint64_t measured_size(void *context, Dwarf_Die *type)
{
    (void)context;
    return type_size(type, 0);
}

static uint64_t measured_align(void *context, Dwarf_Die *type)
{
    return type_align(context, type, 0);
}

static bool definition_of(void *context, Dwarf_Die *decl, Dwarf_Die *def)
{
    (void)context;
    *def = *decl;
    return defined(def)->addr != decl->addr;
}

static struct cxx_cache *cxx_of(struct align_cache *cache)
{
    if (cache->cxx == NULL) {
        struct cxx_measure measure = {measured_size, measured_align, definition_of, cache};
        cache->cxx = cxx_cache_new(&measure);
    }
    return cache->cxx;
}

/* The DW_TAG_inheritance child of aggregate that names cls as a virtual base, if one does. */
static bool direct_virtual_base(Dwarf_Die *aggregate, Dwarf_Die *cls, Dwarf_Die *entry)
{
    Dwarf_Die type, peeled;
    if (checked_child(aggregate, entry) != 0)
        return false;
    do {
        if (cxx_is_virtual_inheritance(entry) && type_of(entry, &type) &&
            checked_peel_type(&type, &peeled) == 0 &&
            defined(resolve_signature(&peeled))->addr == cls->addr)
            return true;
    } while (checked_siblingof(entry, entry) == 0);
    return false;
}

/* Puts block's members at position at of t's. */
static bool splice_members(struct layout_type *t, size_t at, struct layout_type *block)
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

static char *member_name(const char *prefix, const char *own)
{
    if (prefix == NULL || prefix[0] == '\0')
        return strdup(own);
    size_t n = strlen(prefix) + strlen(own) + 2;
    char *name = malloc(n);
    if (name != NULL)
        snprintf(name, n, "%s.%s", prefix, own);
    return name;
}

/* One virtual base of the complete object read at scope, with its members under --expand, put
 * among the members of its level in offset order (a primary one shares offset 0). */
static bool add_virtual_base(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                             const struct cxx_vbase *v, struct member_scope scope)
{
    struct layout_type block = {.kind = t->kind};
    Dwarf_Die die = v->die, entry;
    Dwarf_Word access = DW_ACCESS_public;
    struct layout_member m = {
        .bit_offset = -1, .depth = scope.depth, .is_base = true, .is_virtual = true};
    m.offset = scope.base + v->offset;
    m.size = v->size;
    m.inline_only = !scope.expand && scope.depth > 0;
    m.is_indirect = !direct_virtual_base(aggregate, &die, &entry);
    if (!m.is_indirect && !udata(&entry, DW_AT_accessibility, &access))
        access = dwarf_tag(aggregate) == DW_TAG_class_type ? DW_ACCESS_private : DW_ACCESS_public;
    m.access = (uint8_t)access;
    m.type = probe_type_decl(&die, &m.name_at);
    m.name = m.type ? member_name(scope.prefix, m.type) : NULL;
    if (m.name == NULL || !add_member(&block, m)) {
        free(m.name);
        free(m.type);
        return false;
    }
    bool ok = true;
    if (scope.expand && scope.depth < 8) {
        struct member_scope nested = scope;
        nested.base = m.offset;
        nested.depth++;
        nested.complete = false;
        char *prefix = strdup(m.name);
        nested.prefix = prefix;
        ok = prefix != NULL && read_members(&block, &die, nested);
        free(prefix);
    }
    size_t at = first;
    while (at < t->member_count &&
           !(t->members[at].depth == scope.depth && t->members[at].offset > m.offset))
        at++;
    if (ok && splice_members(t, at, &block))
        return true;
    for (size_t i = 0; i < block.member_count; i++) {
        free(block.members[i].name);
        free(block.members[i].type);
    }
    free(block.members);
    return false;
}

/* The virtual bases of a complete object (Itanium C++ ABI placement, cxx_bases.h). */
static bool add_virtual_bases(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                              struct member_scope scope)
{
    struct cxx_cache *cxx = cxx_of(scope.aligns);
    if (cxx == NULL)
        return false;
    if (!cxx_has_virtual_bases(cxx, aggregate))
        return true;
    struct cxx_vbase *v;
    int n = cxx_virtual_bases(cxx, aggregate, &v);
    bool ok = n >= 0;
    for (int i = 0; ok && i < n; i++)
        ok = add_virtual_base(t, aggregate, first, &v[i], scope);
    free(v);
    return ok;
}

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
 * empty base or [[no_unique_address]] member shares bytes, or a base's tail padding is used). */
static bool any_overlap(const struct layout_type *t, size_t first, uint8_t depth)
{
    uint64_t end = 0;
    for (size_t i = first; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        if (m->depth != depth || m->bit_offset >= 0)
            continue;
        if (m->offset < end)
            return true;
        end = m->offset + m->size > end ? m->offset + m->size : end;
    }
    return false;
}

/* A class-type member or base takes its sizeof, except where that is not what it occupies: a
 * base with virtual bases of its own (they lie elsewhere), or a base or [[no_unique_address]]
 * member whose tail padding, or empty self, holds a later member. Those take their non-virtual
 * size (cxx_bases.h): 0 for an empty class. Members pair with the DWARF entries read_members
 * read, in order. */
static bool settle_sizes(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                         struct member_scope scope)
{
    struct cxx_cache *cxx = cxx_of(scope.aligns);
    Dwarf_Die child, type, cls;
    size_t next = first;
    if (cxx == NULL)
        return false;
    if (checked_child(aggregate, &child) != 0)
        return true;
    do {
        int tag = dwarf_tag(&child);
        if (!((tag == DW_TAG_member && !is_static_member(&child)) ||
              (tag == DW_TAG_inheritance && !cxx_is_virtual_inheritance(&child))) ||
            type_of(&child, &type) == NULL)
            continue; /* (as read_members and read_member skip them) */
        while (next < t->member_count &&
               (t->members[next].depth != scope.depth || t->members[next].is_virtual))
            next++;
        if (next == t->member_count)
            break;
        size_t i = next++;
        if (t->members[i].bit_offset >= 0 || checked_peel_type(&type, &cls) != 0 ||
            !is_aggregate_type(defined(resolve_signature(&cls))))
            continue;
        struct layout_member *m = &t->members[i];
        if (!(tag == DW_TAG_inheritance && cxx_has_virtual_bases(cxx, &cls)) &&
            !taken_by_another(t, i, first, m->offset, m->offset + m->size))
            continue;
        uint64_t own = cxx_base_size(cxx, &cls);
        if ((tag == DW_TAG_inheritance && cxx_has_virtual_bases(cxx, &cls)) ||
            (own < m->size && taken_by_another(t, i, first, m->offset + own, m->offset + m->size)))
            m->size = own;
    } while (checked_siblingof(&child, &child) == 0);
    return true;
}

static bool read_members(struct layout_type *t, Dwarf_Die *aggregate, struct member_scope scope)
{
    Dwarf_Die child;
    bool in_union = dwarf_tag(aggregate) == DW_TAG_union_type;
    if (checked_child(aggregate, &child) != 0)
        return true;
    size_t first = t->member_count;
    bool bases = false;
    do {
        int ctag = dwarf_tag(&child);
        checked_aggregate_child(&child, ctag); /* a damaged tag makes a member vanish */
        bases |= ctag == DW_TAG_inheritance;
        /* Virtual bases are placed in the complete object (add_virtual_bases). */
        if ((ctag == DW_TAG_member && !is_static_member(&child)) ||
            (ctag == DW_TAG_inheritance && !cxx_is_virtual_inheritance(&child)))
            if (!read_member(t, &child, in_union, scope))
                return false;
    } while (checked_siblingof(&child, &child) == 0);
    if (bases && scope.complete && !add_virtual_bases(t, aggregate, first, scope))
        return false;
    if (scope.light || in_union || (!bases && !any_overlap(t, first, scope.depth)))
        return true;
    return settle_sizes(t, aggregate, first, scope);
}

/* An aggregate definition into a layout_type (members in DWARF order). A light read fills only
 * what same_definition compares (size, member names, offsets, bit positions): enough to tell a
 * definition met again in another unit, which is most of them, at a fraction of the cost. */
static bool read_aggregate(struct align_cache *cache, Dwarf_Die *die, const char *name, bool expand,
                           bool light, struct layout_type *t)
{
    memset(t, 0, sizeof *t);
    int tag = dwarf_tag(die);
    t->kind = tag == DW_TAG_class_type ? "class" : tag == DW_TAG_union_type ? "union" : "struct";
    t->name = strdup(name);
    Dwarf_Word size = 0, align;
    if (dwarf_aggregate_size(die, &size) != 0)
        udata(die, DW_AT_byte_size, &size);
    t->size = size;
    if (!read_members(t, die, (struct member_scope){0, NULL, 0, expand, cache, light, true}))
        return false;
    if (light)
        return t->name != NULL;
    uint64_t natural = 1; /* stays 1 when DW_AT_alignment says it */
    t->align_from_dwarf = udata(die, DW_AT_alignment, &align);
    t->align = t->align_from_dwarf ? align : aggregate_align(cache, die, 0, &natural);
    t->packed |= t->align < natural;
    layout_find_holes(t);
    return t->name != NULL;
}

static void free_type(struct layout_type *t)
{
    for (size_t i = 0; i < t->member_count; i++) {
        free(t->members[i].name);
        free(t->members[i].type);
    }
    free(t->members);
    free(t->holes);
    free(t->name);
    free(t->decl_file);
}

/* The index of the next member from i that is not inline_only (a light read skips those). */
static size_t next_compared(const struct layout_type *t, size_t i)
{
    while (i < t->member_count && t->members[i].inline_only)
        i++;
    return i;
}

static bool same_definition(const struct layout_type *a, const struct layout_type *b)
{
    if (a->size != b->size)
        return false;
    size_t i = next_compared(a, 0), j = next_compared(b, 0);
    for (; i < a->member_count && j < b->member_count;
         i = next_compared(a, i + 1), j = next_compared(b, j + 1))
        if (a->members[i].offset != b->members[j].offset ||
            a->members[i].bit_offset != b->members[j].bit_offset ||
            strcmp(a->members[i].name, b->members[j].name) != 0)
            return false;
    return i == a->member_count && j == b->member_count;
}

/* Names seen so far -> index of their first definition: an open-addressing table. */
struct seen {
    size_t *slots; /* index + 1, 0 empty */
    size_t capacity;
};

static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
    return h;
}

static bool seen_grow(struct seen *seen, const struct layout_set *set)
{
    size_t capacity = seen->capacity ? seen->capacity * 2 : 1024;
    size_t *slots = calloc(capacity, sizeof *slots);
    if (slots == NULL)
        return false;
    for (size_t i = 0; i < seen->capacity; i++) {
        size_t v = seen->slots[i];
        if (v == 0)
            continue;
        size_t h = hash_name(set->types[v - 1].name) & (capacity - 1);
        while (slots[h])
            h = (h + 1) & (capacity - 1);
        slots[h] = v;
    }
    free(seen->slots);
    seen->slots = slots;
    seen->capacity = capacity;
    return true;
}

/* Adds t unless an identical definition is known; keeps a different one, flagging both. */
/* A kept definition of t's name equal to t. */
static bool already_kept(const struct layout_set *set, const struct seen *seen,
                         const struct layout_type *t)
{
    if (seen->capacity == 0)
        return false;
    size_t mask = seen->capacity - 1;
    for (size_t h = hash_name(t->name) & mask; seen->slots[h]; h = (h + 1) & mask) {
        const struct layout_type *known = &set->types[seen->slots[h] - 1];
        if (strcmp(known->name, t->name) == 0 && same_definition(known, t))
            return true;
    }
    return false;
}

static bool keep(struct layout_set *set, struct seen *seen, struct layout_type *t)
{
    if ((set->count + 1) * 2 > seen->capacity && !seen_grow(seen, set))
        return false;
    size_t mask = seen->capacity - 1, h = hash_name(t->name) & mask;
    for (; seen->slots[h]; h = (h + 1) & mask) {
        struct layout_type *known = &set->types[seen->slots[h] - 1];
        if (strcmp(known->name, t->name) != 0)
            continue;
        if (same_definition(known, t)) {
            free_type(t);
            return true;
        }
        if (known->unit_local || t->unit_local)
            continue; /* two units' own types that share a name */
        known->odr_conflict = true;
        t->odr_conflict = true;
    }
    if (set->count == set->capacity) {
        size_t capacity = set->capacity ? set->capacity * 2 : 256;
        struct layout_type *grown = realloc(set->types, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        set->types = grown;
        set->capacity = capacity;
    }
    set->types[set->count++] = *t;
    seen->slots[h] = set->count;
    return true;
}

struct walk {
    struct layout_set *set;
    bool expand;
    struct seen seen;
    struct align_cache aligns;
    bool failed;
};

static bool is_aggregate(int tag)
{
    return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

/* Reads one definition, unless a light read shows it is one already kept. */
/* layout_read_located: also read where each type is defined, which needs the line tables that
 * the lean open leaves out (so that plain dumps of -gz files stay fast). */
static bool want_decl_files;

/* DW_AT_decl_file (joined to the unit's DW_AT_comp_dir when relative) and DW_AT_decl_line of a
 * definition into t; false when out of memory. */
static bool read_decl(Dwarf_Die *die, struct layout_type *t)
{
    int line;
    Dwarf_Die cu;
    Dwarf_Attribute attr;
    const char *file = dwarf_decl_file(die), *comp_dir = NULL;
    if (file != NULL && dwarf_diecu(die, &cu, NULL, NULL) != NULL)
        comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
    if (file != NULL && (t->decl_file = decl_path(file, comp_dir)) == NULL)
        return false;
    t->decl_line = dwarf_decl_line(die, &line) == 0 && line > 0 ? (unsigned)line : 0;
    return true;
}

static void read_definition(struct walk *w, Dwarf_Die *die, const struct scope_name *named)
{
    struct layout_type t;
    char *name = strdup(named->name); /* the names' cache may drop it while types are read */
    if (name == NULL || !read_aggregate(&w->aligns, die, name, w->expand, true, &t)) {
        free(name);
        w->failed = true;
        return;
    }
    bool known = already_kept(w->set, &w->seen, &t);
    free_type(&t);
    if (!known) {
        bool read = read_aggregate(&w->aligns, die, name, w->expand, false, &t);
        t.unit_local = named->unit_local;
        if (!read || (want_decl_files && !read_decl(die, &t)) || !keep(w->set, &w->seen, &t))
            w->failed = true;
    }
    free(name);
}

/* A struct, class or union definition of the unit, or a typedef: the definition is read under
 * its qualified name (scope_names.h), an unnamed one under the name a typedef gives it
 * (`typedef struct {...} anon_t;`, as pahole and gdb name it). */
static void visit_type(struct walk *w, Dwarf_Die *die)
{
    struct scope_name named, own;
    Dwarf_Attribute attr;
    Dwarf_Die target;
    if (is_aggregate(dwarf_tag(die))) {
        /* A declaration, or a stand-in for a type unit's definition (read in that unit). */
        if (dwarf_hasattr(die, DW_AT_declaration) || dwarf_hasattr(die, DW_AT_signature))
            return;
        if (!scope_name_of(die, &named))
            w->failed = true;
        else if (named.name != NULL)
            read_definition(w, die, &named);
        return;
    }
    /* (clang puts the anonymous struct in a type unit of its own, and its typedef in the CU) */
    if (dwarf_attr(die, DW_AT_type, &attr) == NULL || checked_formref_die(&attr, &target) == NULL ||
        !is_aggregate(dwarf_tag(resolve_signature(&target))) ||
        dwarf_hasattr(&target, DW_AT_declaration))
        return;
    if (!scope_name_of(&target, &own) || (own.name == NULL && !scope_name_of(die, &named)))
        w->failed = true;
    else if (own.name == NULL && named.name != NULL)
        read_definition(w, &target, &named);
}

/* Reads the types a unit defines: at its top, in namespaces, in classes, in C++ functions. */
static void walk_unit(struct walk *w, Dwarf_Die *root)
{
    const Dwarf_Die *types;
    size_t count;
    if (!scope_unit_types(root, &types, &count)) {
        w->failed = true;
        return;
    }
    for (size_t i = 0; i < count && !w->failed; i++) {
        Dwarf_Die die = types[i];
        visit_type(w, &die);
    }
}

/* The CU DIE offsets .debug_names or .gdb_index names for every wanted name (and which index
 * in *index_name), or 0 (read every unit) when there is no index, a name is a glob or missing
 * from it, or .gdb_index points into type units. */
static size_t units_from_index(Dwarf *dw, const struct layout_options *o, uint64_t *dies,
                               size_t max, const char **index_name)
{
    size_t named = o ? debug_names_unit_dies(dw, o->names, o->name_count, dies, max) : 0;
    *index_name = named > 0 ? " (chosen by .debug_names)" : " (chosen by .gdb_index)";
    if (named > 0)
        return named;
    struct gdb_index index;
    if (o == NULL || o->name_count == 0 || !gdb_index_open(dw, &index))
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < o->name_count; i++) {
        if (strpbrk(o->names[i], "*?[") != NULL || n >= max)
            return 0;
        int found = gdb_index_type_units(&index, o->names[i], dies + n, (int)(max - n));
        if (found <= 0)
            return 0;
        n += (size_t)found;
    }
    for (size_t i = 0; i < n; i++) { /* unit header offsets -> their DIE offsets */
        Dwarf_Off next;
        size_t header;
        if (dwarf_next_unit(dw, dies[i], &next, &header, NULL, NULL, NULL, NULL, NULL, NULL) != 0)
            return 0;
        dies[i] += header;
    }
    return n;
}

static bool among(uint64_t value, const uint64_t *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (values[i] == value)
            return true;
    return false;
}

/* layout_read_first is running (on this thread). */
static _Thread_local bool stop_at_first;

/* Every wanted name (or glob) names a type read so far, as the command line matches them. */
static bool all_matched(const struct layout_set *set, const struct layout_options *o)
{
    for (size_t n = 0; n < o->name_count; n++) {
        bool found = false;
        for (size_t i = 0; i < set->count && !found; i++)
            found = type_name_matches(o->names[n], set->types[i].name);
        if (!found)
            return false;
    }
    return true;
}

static enum layout_status read_units(Dwarf *dw, const struct layout_options *options,
                                     struct layout_set *out, char *error, size_t size);

/* The index named a unit that does not define the struct itself (a typedef of that name, or a
 * declaration): read every unit after all. */
static enum layout_status read_again_fully(Dwarf *dw, const struct layout_options *options,
                                           struct layout_set *out, char *error, size_t size)
{
    struct layout_options everything = *options;
    everything.names = NULL;
    everything.name_count = 0;
    char *binary = out->binary;
    out->binary = NULL;
    layout_free(out);
    out->binary = binary;
    return read_units(dw, &everything, out, error, size);
}

static enum layout_status read_units(Dwarf *dw, const struct layout_options *options,
                                     struct layout_set *out, char *error, size_t size)
{
    bool expand = options && options->expand;
    uint64_t chosen[64];
    const char *index_name;
    size_t chosen_count = units_from_index(dw, options, chosen, 64, &index_name);
    out->used_index = chosen_count > 0;
    out->index_used = out->used_index ? index_name : NULL;
    struct walk w = {.set = out, .expand = expand};
    definitions = type_defs_new(dw); /* (NULL when out of memory: declarations stay unsized) */
    dwarf_errors_reset();
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t unit_type;
    Dwarf_Die cudie, subdie;
    size_t units = 0;
    int rc;
    while ((rc = dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie)) == 0) {
        units++;
        if (out->used_index && !among(dwarf_dieoffset(&cudie), chosen, chosen_count))
            continue;
        out->units_read++;
        /* A skeleton's types are in its split unit (the .dwo); a type unit's under its DIE. */
        Dwarf_Die *root =
            unit_type == DW_UT_skeleton && dwarf_tag(&subdie) != DW_TAG_invalid ? &subdie : &cudie;
        if (unit_type == DW_UT_skeleton && root == &cudie) { /* its types are in a .dwo */
            dwarf_errors_missing_dwo(&cudie);
            break;
        }
        walk_unit(&w, root);
        unit_check(root); /* a damaged unit can end the walk early: read to its end? */
        if (w.failed)
            break;
        /* --first: the rest go unread, even uncounted (each unit header is a page to map). */
        if (stop_at_first && options && options->name_count > 0 && all_matched(out, options))
            break;
    }
    free(w.seen.slots);
    free(w.aligns.slots);
    cxx_cache_free(w.aligns.cxx);
    type_defs_free(definitions);
    definitions = NULL;
    scope_names_reset();
    if (!layout_checked(out, error, size))
        return LAYOUT_INPUT_ERROR;
    if (rc < 0 || w.failed) {
        fail(error, size, "%s: cannot read its DWARF: %s", out->binary,
             w.failed ? "out of memory" : dwarf_errmsg(-1));
        return LAYOUT_INPUT_ERROR;
    }
    out->units_total = units;
    if (units == 0) {
        fail(error, size, "%s has no DWARF units", out->binary);
        return LAYOUT_INPUT_ERROR;
    }
    if (out->used_index && !all_matched(out, options))
        return read_again_fully(dw, options, out, error, size);
    return LAYOUT_OK;
}

enum layout_status layout_read(const char *path, const struct layout_options *options,
                               struct layout_set *out, char *error, size_t error_size)
{
    const char *debug_file = options ? options->debug_file : NULL;
    memset(out, 0, sizeof *out);
    out->binary = strdup(path);
    if (!probe_check_file(path, error, error_size))
        return LAYOUT_INPUT_ERROR;
    if (debug_file != NULL) {
        if (!probe_check_file(debug_file, error, error_size)) /* a cut file: say so */
            return LAYOUT_INPUT_ERROR;
        int fd = open(debug_file, O_RDONLY | O_CLOEXEC);
        Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
        if (dw == NULL) {
            fail(error, error_size, "%s: no DWARF in this debug file (%s)", debug_file,
                 fd < 0 ? strerror(errno) : dwarf_errmsg(-1));
            if (fd >= 0)
                close(fd);
            return LAYOUT_INPUT_ERROR;
        }
        enum layout_status status = read_units(dw, options, out, error, error_size);
        dwarf_end(dw);
        close(fd);
        return status;
    }
    struct lean_dwarf lean;
    if (!want_decl_files && lean_dwarf_open(path, &lean)) {
        enum layout_status status = read_units(lean.dwarf, options, out, error, error_size);
        lean_dwarf_close(&lean);
        return status;
    }
    Dwfl *dwfl;
    Dwfl_Module *mod = probe_report_offline(path, &dwfl, error, error_size);
    if (mod == NULL)
        return LAYOUT_INPUT_ERROR;
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
    if (dw == NULL) {
        fail(error, error_size,
             "%s has no DWARF debug info: rebuild it with -g, install its -dbgsym package, or "
             "pass --debug-file FILE",
             path);
        dwfl_end(dwfl);
        return LAYOUT_INPUT_ERROR;
    }
    enum layout_status status = read_units(dw, options, out, error, error_size);
    dwfl_end(dwfl);
    return status;
}

enum layout_status layout_read_first(const char *path, const struct layout_options *options,
                                     struct layout_set *out, char *error, size_t error_size)
{
    stop_at_first = true;
    enum layout_status status = layout_read(path, options, out, error, error_size);
    stop_at_first = false;
    return status;
}

void layout_free(struct layout_set *set)
{
    for (size_t i = 0; i < set->count; i++)
        free_type(&set->types[i]);
    free(set->types);
    free(set->binary);
    memset(set, 0, sizeof *set);
}

enum layout_status layout_read_located(const char *path, const struct layout_options *options,
                                       struct layout_set *out, char *error, size_t error_size)
{
    want_decl_files = true;
    enum layout_status status = layout_read(path, options, out, error, error_size);
    want_decl_files = false;
    return status;
}
