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
#include "gdb_index.h"
#include "input.h"
#include "lean_dwarf.h"
#include "type_names.h"

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
    if (dwarf_attr(die, DW_AT_signature, &attr) != NULL && dwarf_formref_die(&attr, &target))
        *die = target;
    return die;
}

static Dwarf_Die *type_of(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(die, DW_AT_type, &attr) == NULL || !dwarf_formref_die(&attr, out))
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
                                 c->capacity ? 2 * c->capacity : 4096, c->used};
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

static uint64_t derive_align(struct align_cache *cache, Dwarf_Die *die, int depth)
{
    Dwarf_Word align;
    if (udata(die, DW_AT_alignment, &align))
        return align;
    if (depth > 32)
        return 1;
    Dwarf_Die peeled, inner;
    if (dwarf_peel_type(die, &peeled) != 0)
        return 1;
    resolve_signature(&peeled);
    if (udata(&peeled, DW_AT_alignment, &align))
        return align;
    switch (dwarf_tag(&peeled)) {
    case DW_TAG_array_type:
        return type_of(&peeled, &inner) ? type_align(cache, &inner, depth + 1) : 1;
    case DW_TAG_structure_type:
    case DW_TAG_class_type:
    case DW_TAG_union_type: {
        uint64_t max = 1;
        Dwarf_Die child;
        if (dwarf_child(&peeled, &child) != 0)
            return 1;
        do {
            int tag = dwarf_tag(&child);
            if ((tag == DW_TAG_member || tag == DW_TAG_inheritance) &&
                !dwarf_hasattr(&child, DW_AT_external) && type_of(&child, &inner)) {
                uint64_t a = type_align(cache, &inner, depth + 1);
                max = a > max ? a : max;
            }
        } while (dwarf_siblingof(&child, &child) == 0);
        return max;
    }
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
    if (depth > 32 || dwarf_peel_type(die, &peeled) != 0)
        return 0;
    resolve_signature(&peeled);
    if (dwarf_tag(&peeled) != DW_TAG_array_type) {
        dwarf_aggregate_size(&peeled, &size);
        return size;
    }
    uint64_t count = 1;
    Dwarf_Die child;
    if (dwarf_child(&peeled, &child) == 0) {
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
        } while (dwarf_siblingof(&child, &child) == 0);
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
    bool light; /* only what same_definition compares: no type names, no alignment */
};

static bool is_aggregate_type(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

static bool read_members(struct layout_type *t, Dwarf_Die *aggregate, struct member_scope scope);

/* One DW_TAG_member or DW_TAG_inheritance child of an aggregate. */
static bool read_member(struct layout_type *t, Dwarf_Die *child, bool in_union,
                        struct member_scope scope)
{
    Dwarf_Die type;
    if (type_of(child, &type) == NULL)
        return true; /* no type: nothing to lay out */
    struct layout_member m = {.bit_offset = -1, .depth = scope.depth};
    m.is_base = dwarf_tag(child) == DW_TAG_inheritance;
    m.type = scope.light && !m.is_base ? NULL : probe_type_name(&type);
    const char *name = dwarf_diename(child);
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
    if (!scope.expand || scope.depth >= 8 || m.bit_offset >= 0 ||
        dwarf_peel_type(&type, &inner) != 0 || !is_aggregate_type(resolve_signature(&inner)))
        return true;
    struct member_scope nested = {m.offset,
                                  t->members[t->member_count - 1].name,
                                  (uint8_t)(scope.depth + 1),
                                  true,
                                  scope.aligns,
                                  scope.light};
    /* The name lives in t->members, which read_members may move: pass a copy. */
    char *prefix = strdup(nested.prefix);
    if (prefix == NULL)
        return false;
    nested.prefix = prefix;
    bool ok = read_members(t, &inner, nested);
    free(prefix);
    return ok;
}

static bool read_members(struct layout_type *t, Dwarf_Die *aggregate, struct member_scope scope)
{
    Dwarf_Die child;
    bool in_union = dwarf_tag(aggregate) == DW_TAG_union_type;
    if (dwarf_child(aggregate, &child) != 0)
        return true;
    do {
        int ctag = dwarf_tag(&child);
        if (((ctag == DW_TAG_member && !dwarf_hasattr(&child, DW_AT_external)) ||
             ctag == DW_TAG_inheritance) &&
            !read_member(t, &child, in_union, scope))
            return false;
    } while (dwarf_siblingof(&child, &child) == 0);
    return true;
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
    if (!read_members(t, die, (struct member_scope){0, NULL, 0, expand, cache, light}))
        return false;
    if (light)
        return t->name != NULL;
    t->align_from_dwarf = udata(die, DW_AT_alignment, &align);
    t->align = t->align_from_dwarf ? align : type_align(cache, die, 0);
    if (t->packed && !t->align_from_dwarf)
        t->align = 1;
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
}

static bool same_definition(const struct layout_type *a, const struct layout_type *b)
{
    if (a->size != b->size || a->member_count != b->member_count)
        return false;
    for (size_t i = 0; i < a->member_count; i++)
        if (a->members[i].offset != b->members[i].offset ||
            a->members[i].bit_offset != b->members[i].bit_offset ||
            strcmp(a->members[i].name, b->members[i].name) != 0)
            return false;
    return true;
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
    bool cplusplus;
    char scope[1024];
    bool failed;
};

static bool is_aggregate(int tag)
{
    return tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type;
}

/* Reads one definition, unless a light read shows it is one already kept. */
static void read_definition(struct walk *w, Dwarf_Die *die)
{
    struct layout_type t;
    if (!read_aggregate(&w->aligns, die, w->scope, w->expand, true, &t)) {
        w->failed = true;
        return;
    }
    bool known = already_kept(w->set, &w->seen, &t);
    free_type(&t);
    if (known)
        return;
    if (!read_aggregate(&w->aligns, die, w->scope, w->expand, false, &t) ||
        !keep(w->set, &w->seen, &t))
        w->failed = true;
}

/* Visits the children of die: aggregates are read, namespaces and aggregates are entered (their
 * name extends the scope of what they contain, in C++). */
static void walk_scope(struct walk *w, Dwarf_Die *die)
{
    Dwarf_Die child;
    if (dwarf_child(die, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_namespace && !is_aggregate(tag))
            continue;
        const char *name = dwarf_diename(&child);
        char saved[sizeof w->scope];
        memcpy(saved, w->scope, sizeof saved);
        size_t scope_len = strlen(w->scope);
        if (name != NULL && w->cplusplus)
            snprintf(w->scope + scope_len, sizeof w->scope - scope_len, "%s%s",
                     scope_len ? "::" : "", name);
        else if (name != NULL)
            snprintf(w->scope, sizeof w->scope, "%s", name);
        if (is_aggregate(tag) && name != NULL && !dwarf_hasattr(&child, DW_AT_declaration)) {
            read_definition(w, &child);
        }
        if (name != NULL || tag == DW_TAG_namespace)
            walk_scope(w, &child);
        memcpy(w->scope, saved, sizeof saved);
    } while (dwarf_siblingof(&child, &child) == 0 && !w->failed);
}

static bool is_cplusplus(Dwarf_Die *cu)
{
    Dwarf_Word lang;
    if (!udata(cu, DW_AT_language, &lang))
        return false;
    return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
           lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

/* The CU DIE offsets .gdb_index names for every wanted name, or 0 (read every unit) when there
 * is no index, a name is a glob or missing from it, or it points into type units. */
static size_t units_from_index(Dwarf *dw, const struct layout_options *o, uint64_t *dies,
                               size_t max)
{
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

static bool all_found(const struct layout_set *set, const struct layout_options *o)
{
    for (size_t n = 0; n < o->name_count; n++) {
        bool found = false;
        for (size_t i = 0; i < set->count && !found; i++)
            found = strcmp(set->types[i].name, o->names[n]) == 0;
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
    size_t chosen_count = units_from_index(dw, options, chosen, 64);
    out->used_index = chosen_count > 0;
    struct walk w = {.set = out, .expand = expand};
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
        w.cplusplus = is_cplusplus(root);
        w.scope[0] = '\0';
        walk_scope(&w, root);
        if (w.failed)
            break;
    }
    free(w.seen.slots);
    free(w.aligns.slots);
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
    if (out->used_index && !all_found(out, options))
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
    if (lean_dwarf_open(path, &lean)) {
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

void layout_free(struct layout_set *set)
{
    for (size_t i = 0; i < set->count; i++)
        free_type(&set->types[i]);
    free(set->types);
    free(set->binary);
    memset(set, 0, sizeof *set);
}
