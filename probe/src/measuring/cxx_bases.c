/* Virtual base placement per the Itanium C++ ABI, from what DWARF says of each class in the
 * inheritance graph: its size, vptr (an artificial "_vptr.X" member), data members and
 * non-virtual bases with their offsets. From these come each class's nvsize, dsize and nvalign,
 * whether it is empty, dynamic or nearly empty, and its primary base; then the virtual bases of
 * the complete object go, in inheritance graph order, after its non-virtual part (ABI 2.4 III),
 * except primary ones, which share the offset of the class they are primary for. */
#include "probe_measuring.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"

#define POINTER 8 /* LP64: the size and alignment of a vptr */
#define MAX_DEPTH 32
#define MAX_VISITS 4096 /* subobjects walked in one graph (non-virtual diamonds repeat) */
#define UNKNOWN UINT64_MAX

struct base_ref {
    int32_t cls;
    bool is_virtual;
    uint64_t offset; /* a non-virtual base's, in its derived class */
};

struct cls {
    Dwarf_Die die;
    uint64_t size, dsize, nvsize, nvalign;
    uint64_t least;  /* the least data size any [[no_unique_address]] members allow (see
                        probe_cxx_share_size) */
    int32_t primary; /* the primary base class, -1 when none */
    bool primary_virtual, dynamic, empty, pod, has_vptr;
    bool may_be_empty; /* empty if each class-type member is [[no_unique_address]] */
    bool unknown;      /* it, or a class its layout rests on (a base, a member's class), is only
                          declared and defined nowhere found: its measures are not known */
    bool scanned, measured, measuring;
    int8_t has_vbases; /* -1 until known */
    struct base_ref *bases;
    size_t base_count;
    int32_t *zero_members; /* classes of the data members at offset 0 (for type conflicts) */
    size_t zero_count;
};

struct slot {
    const void *key;
    int32_t index;
};

struct cxx_cache {
    struct cxx_measure measure;
    struct cls *classes;
    size_t count, capacity;
    struct die_table slots; /* of struct slot: the index of each class */
    bool failed;
};

struct list {
    int32_t *items;
    size_t count, capacity;
};

static bool list_add(struct list *l, int32_t v)
{
    if (!array_reserve(&l->items, &l->capacity, l->count + 1, sizeof *l->items))
        return false;
    l->items[l->count++] = v;
    return true;
}

static int32_t list_find(const struct list *l, int32_t v)
{
    for (size_t i = 0; i < l->count; i++)
        if (l->items[i] == v)
            return (int32_t)i;
    return -1;
}

struct cxx_cache *probe_cxx_cache_new(const struct cxx_measure *measure)
{
    struct cxx_cache *c = calloc(1, sizeof *c);
    if (c != NULL)
        c->measure = *measure;
    return c;
}

void probe_cxx_cache_free(struct cxx_cache *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->count; i++) {
        free(c->classes[i].bases);
        free(c->classes[i].zero_members);
    }
    free(c->classes);
    probe_die_table_free(&c->slots);
    free(c);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* The class a type refers to: typedefs and qualifiers peeled, type-unit declarations followed,
 * a class the unit only declares defined from another unit. */
static bool class_die(const struct cxx_measure *m, Dwarf_Die *type, Dwarf_Die *out)
{
    if (dwarf_peel_type(type, out) != 0)
        return false;
    probe_resolve_signature(out);
    Dwarf_Die target;
    int tag = dwarf_tag(out);
    if (dwarf_hasattr(out, DW_AT_declaration) && m->define(m->context, out, &target))
        *out = target;
    return is_aggregate_tag(tag);
}

bool probe_cxx_is_virtual_inheritance(Dwarf_Die *inheritance)
{
    Dwarf_Word virtuality = DW_VIRTUALITY_none;
    return dwarf_tag(inheritance) == DW_TAG_inheritance &&
           probe_udata(inheritance, DW_AT_virtuality, &virtuality) &&
           virtuality != DW_VIRTUALITY_none;
}

/* The index of the class die (a definition), added unknown on first sight; -1 out of memory. */
static int32_t class_index(struct cxx_cache *c, Dwarf_Die *die)
{
    if (!die_table_room(&c->slots, sizeof(struct slot)))
        return -1;
    struct slot *s = die_table_slot(&c->slots, die->addr);
    if (s->key != NULL)
        return s->index;
    if (!array_reserve(&c->classes, &c->capacity, c->count + 1, sizeof *c->classes))
        return -1;
    c->classes[c->count] = (struct cls){.die = *die, .primary = -1, .has_vbases = -1};
    *s = (struct slot){die->addr, (int32_t)c->count};
    c->slots.count++;
    return (int32_t)c->count++;
}

/* The direct bases of class i, in declaration order. */
static bool scan_bases(struct cxx_cache *c, int32_t i)
{
    if (c->classes[i].scanned)
        return true;
    Dwarf_Die child, type, base;
    Dwarf_Die die = c->classes[i].die;
    struct base_ref *bases = NULL;
    size_t n = 0, capacity = 0;
    if (probe_checked_child(&die, &child) == 0) {
        do {
            if (dwarf_tag(&child) != DW_TAG_inheritance || probe_type_of(&child, &type) == NULL ||
                !class_die(&c->measure, &type, &base))
                continue;
            struct base_ref b = {class_index(c, &base), probe_cxx_is_virtual_inheritance(&child),
                                 0};
            if (b.cls < 0 || !array_reserve(&bases, &capacity, n + 1, sizeof *bases)) {
                free(bases);
                return false;
            }
            if (!b.is_virtual && !probe_member_location(&child, &b.offset))
                b.offset = 0; /* absent: the base is at the start */
            bases[n++] = b;
        } while (probe_checked_siblingof(&child, &child) == 0);
    }
    c->classes[i].bases = bases;
    c->classes[i].base_count = n;
    c->classes[i].scanned = true;
    return true;
}

static int has_vbases(struct cxx_cache *c, int32_t i, int depth)
{
    if (c->classes[i].has_vbases >= 0)
        return c->classes[i].has_vbases;
    if (depth > MAX_DEPTH || !scan_bases(c, i))
        return -1;
    int found = 0;
    for (size_t b = 0; b < c->classes[i].base_count && found == 0; b++) {
        struct base_ref r = c->classes[i].bases[b];
        found = r.is_virtual ? 1 : has_vbases(c, r.cls, depth + 1);
    }
    if (found >= 0)
        c->classes[i].has_vbases = (int8_t)found;
    return found;
}

bool probe_cxx_has_virtual_bases(struct cxx_cache *c, Dwarf_Die *cls)
{
    int32_t i = class_index(c, cls);
    return i >= 0 && has_vbases(c, i, 0) == 1;
}

static bool measure(struct cxx_cache *c, int32_t i, int depth);

/* Virtual bases of class i, direct and indirect, in inheritance graph order (depth first, left
 * to right, a class before its bases), each once. A class met again adds nothing new: seen (the
 * non-virtual bases walked) keeps the walk linear however often non-virtual bases repeat. */
static bool order_walk(struct cxx_cache *c, int32_t i, struct list *out, struct list *seen,
                       int depth)
{
    if (depth > MAX_DEPTH)
        return false;
    for (size_t b = 0; b < c->classes[i].base_count; b++) {
        struct base_ref r = c->classes[i].bases[b];
        /* (A class can be a virtual base here and a non-virtual one there: apart.) */
        struct list *met = r.is_virtual ? out : seen;
        if (list_find(met, r.cls) >= 0)
            continue;
        if (!list_add(met, r.cls) || !order_walk(c, r.cls, out, seen, depth + 1))
            return false;
    }
    return true;
}

static bool virtual_order(struct cxx_cache *c, int32_t i, struct list *out, int depth)
{
    struct list seen = {0};
    bool ok = order_walk(c, i, out, &seen, depth);
    free(seen.items);
    return ok;
}

/* Every class of i's graph, i excluded, each once. */
static bool graph_classes(struct cxx_cache *c, int32_t i, struct list *out, int depth)
{
    if (depth > MAX_DEPTH)
        return false;
    for (size_t b = 0; b < c->classes[i].base_count; b++) {
        int32_t k = c->classes[i].bases[b].cls;
        if (list_find(out, k) >= 0)
            continue;
        if (!list_add(out, k) || !graph_classes(c, k, out, depth + 1))
            return false;
    }
    return true;
}

/* ABI 2.4 I: a non-virtual dynamic base if any, else a nearly empty virtual base, preferably
 * one no other base has as its primary. */
static bool choose_primary(struct cxx_cache *c, int32_t i)
{
    struct cls *x = &c->classes[i];
    for (size_t b = 0; b < x->base_count; b++)
        if (!x->bases[b].is_virtual && c->classes[x->bases[b].cls].dynamic) {
            x->primary = x->bases[b].cls;
            return true;
        }
    if (!x->dynamic)
        return true;
    struct list order = {0}, graph = {0}, taken = {0};
    bool ok = virtual_order(c, i, &order, 0) && graph_classes(c, i, &graph, 0);
    for (size_t k = 0; ok && k < graph.count; k++) {
        struct cls *g = &c->classes[graph.items[k]];
        if (g->primary_virtual)
            ok = list_add(&taken, g->primary);
    }
    int32_t first = -1, free_one = -1;
    for (size_t k = 0; ok && k < order.count && free_one < 0; k++) {
        struct cls *v = &c->classes[order.items[k]];
        if (!v->dynamic || v->dsize != POINTER) /* not nearly empty */
            continue;
        if (first < 0)
            first = order.items[k];
        if (list_find(&taken, order.items[k]) < 0)
            free_one = order.items[k];
    }
    x = &c->classes[i];
    x->primary = free_one >= 0 ? free_one : first;
    x->primary_virtual = x->primary >= 0;
    free(order.items);
    free(graph.items);
    free(taken.items);
    return ok;
}

/* A constructor, destructor or copy assignment the user declared: the class is not a POD. */
static bool user_special_member(Dwarf_Die *fn, const char *class_name)
{
    const char *name = dwarf_diename(fn);
    if (name == NULL || dwarf_hasattr(fn, DW_AT_artificial))
        return false;
    size_t plain = class_name ? strcspn(class_name, "<") : 0;
    return name[0] == '~' || strcmp(name, "operator=") == 0 ||
           (plain > 0 && strncmp(name, class_name, plain) == 0 &&
            (name[plain] == '\0' || name[plain] == '<'));
}

struct member_facts {
    uint64_t end, align;
    uint64_t least_end; /* end, with each class-type member at its least data size */
    bool data, pod, virtual_fn, vptr, unknown;
    bool only_empty_members; /* each data member is of a class that may be empty */
    struct list zero;
};

/* What a data member's type adds to the facts of its class (a POD only of PODs, the classes at
 * offset 0), and whether the class could still be empty, and how little of it the member could
 * take, were it [[no_unique_address]]: DWARF does not say whether it is, and an overlap shows it
 * (*least_end is where the member ends at the least). */
static bool member_class(struct cxx_cache *c, Dwarf_Die *type, uint64_t offset, bool bit_field,
                         uint64_t *least_end, struct member_facts *f, int depth)
{
    Dwarf_Die peeled, inner;
    if (dwarf_peel_type(type, &peeled) != 0) {
        f->only_empty_members = false;
        return true;
    }
    int ptag = dwarf_tag(&peeled);
    f->pod &= ptag != DW_TAG_reference_type && ptag != DW_TAG_rvalue_reference_type;
    while (dwarf_tag(&peeled) == DW_TAG_array_type && probe_type_of(&peeled, &inner) &&
           dwarf_peel_type(&inner, &peeled) == 0)
        ;
    if (!class_die(&c->measure, &peeled, &inner)) {
        f->only_empty_members = false;
        return true;
    }
    int32_t k = class_index(c, &inner);
    if (k < 0 || !measure(c, k, depth + 1))
        return false;
    const struct cls *member = &c->classes[k];
    f->pod &= member->pod;
    f->unknown |= member->unknown;
    if (ptag == DW_TAG_array_type || bit_field) {
        f->only_empty_members = false;
        return true;
    }
    f->only_empty_members &= member->may_be_empty;
    *least_end = offset + member->least;
    return offset != 0 || list_add(&f->zero, k);
}

/* One non-static data member, vptr or member function of the class measured. */
static bool measure_member(struct cxx_cache *c, Dwarf_Die *child, bool is_class,
                           const char *class_name, struct member_facts *f, int depth)
{
    int tag = dwarf_tag(child);
    if (tag == DW_TAG_subprogram) {
        Dwarf_Word v = DW_VIRTUALITY_none;
        f->virtual_fn |= probe_udata(child, DW_AT_virtuality, &v) && v != DW_VIRTUALITY_none;
        f->pod &= !user_special_member(child, class_name);
        return true;
    }
    if (tag != DW_TAG_member || dwarf_hasattr(child, DW_AT_external) ||
        dwarf_hasattr(child, DW_AT_declaration))
        return true;
    const char *name = dwarf_diename(child);
    if (dwarf_hasattr(child, DW_AT_artificial) && name && strncmp(name, "_vptr", 5) == 0) {
        f->vptr = true;
        return true;
    }
    Dwarf_Die type;
    if (probe_type_of(child, &type) == NULL)
        return true;
    Dwarf_Word bits = 0, access = is_class ? DW_ACCESS_private : DW_ACCESS_public;
    uint64_t offset = 0, end;
    if (!probe_member_location(child, &offset))
        offset = 0; /* absent: a union's member, or unreadable */
    if (probe_udata(child, DW_AT_bit_size, &bits)) {
        if (bits == 0)
            return true; /* a zero-width bit-field holds nothing */
        Dwarf_Word start = offset * 8, legacy, storage = c->measure.size(c->measure.context, &type);
        if (!probe_udata(child, DW_AT_data_bit_offset, &start) &&
            probe_udata(child, DW_AT_bit_offset, &legacy)) {
            probe_udata(child, DW_AT_byte_size, &storage);
            start = offset * 8 + storage * 8 - legacy - bits;
        }
        end = (start + bits + 7) / 8;
    } else {
        end = offset + c->measure.size(c->measure.context, &type);
    }
    probe_udata(child, DW_AT_accessibility, &access);
    f->pod &= access == DW_ACCESS_public;
    f->data = true;
    f->end = max_u64(f->end, end);
    uint64_t least_end = end; /* lowered below for a member of class type */
    Dwarf_Word own = 1;       /* alignas on the member */
    probe_udata(child, DW_AT_alignment, &own);
    f->align = max_u64(f->align, max_u64(own, c->measure.align(c->measure.context, &type)));
    bool ok = member_class(c, &type, offset, bits > 0, &least_end, f, depth);
    f->least_end = max_u64(f->least_end, least_end);
    return ok;
}

/* The least data size of class x: its data size were each member of class type that could be
 * [[no_unique_address]] one (ABI 2.4 II: such a member takes its own data size, none when it is
 * of an empty class), computed as settle_nonvirtual does. A POD keeps its tail padding. */
static uint64_t settle_least(const struct cxx_cache *c, const struct cls *x,
                             const struct member_facts *f)
{
    if (x->may_be_empty)
        return 0;
    if (x->pod || x->unknown)
        return x->size;
    uint64_t least = f->vptr ? max_u64(f->least_end, POINTER) : f->least_end;
    for (size_t b = 0; b < x->base_count; b++) {
        const struct cls *base = &c->classes[x->bases[b].cls];
        if (!x->bases[b].is_virtual)
            least = max_u64(least, x->bases[b].offset + base->least);
    }
    if (x->primary_virtual)
        least = max_u64(least, c->classes[x->primary].least);
    return least;
}

/* Sizes of the non-virtual part of class i (ABI 2.4 II): the primary base, the non-virtual
 * bases and the data members where DWARF puts them. */
static void settle_nonvirtual(struct cxx_cache *c, int32_t i, const struct member_facts *f)
{
    struct cls *x = &c->classes[i];
    Dwarf_Word align = 1;
    probe_udata(&x->die, DW_AT_alignment, &align);
    uint64_t nvsize = f->end, dsize = f->end, nvalign = max_u64(align, f->align);
    if (f->vptr) {
        nvsize = dsize = max_u64(nvsize, POINTER);
        nvalign = max_u64(nvalign, POINTER);
    }
    for (size_t b = 0; b < x->base_count; b++) {
        const struct cls *base = &c->classes[x->bases[b].cls];
        if (x->bases[b].is_virtual && !(x->primary_virtual && x->primary == x->bases[b].cls))
            continue;
        uint64_t at = x->bases[b].is_virtual ? 0 : x->bases[b].offset;
        nvalign = max_u64(nvalign, base->nvalign);
        nvsize = max_u64(nvsize, at + (base->empty ? base->size : base->nvsize));
        if (!base->empty)
            dsize = max_u64(dsize, at + base->nvsize);
    }
    /* A primary virtual base that is inherited only indirectly still sits at offset 0. */
    if (x->primary_virtual) {
        nvsize = max_u64(nvsize, c->classes[x->primary].nvsize);
        dsize = max_u64(dsize, c->classes[x->primary].nvsize);
        nvalign = max_u64(nvalign, c->classes[x->primary].nvalign);
    }
    if (x->pod)
        nvsize = dsize = x->size;
    x->nvsize = nvsize;
    x->dsize = dsize;
    x->nvalign = nvalign;
    x->least = settle_least(c, x, f);
}

static bool measure(struct cxx_cache *c, int32_t i, int depth)
{
    if (c->classes[i].measured)
        return true;
    if (c->classes[i].measuring || depth > MAX_DEPTH || !scan_bases(c, i))
        return false; /* a class inside itself: corrupt DWARF */
    c->classes[i].measuring = true;
    Dwarf_Die die = c->classes[i].die, child;
    Dwarf_Word size = 0;
    probe_udata(&die, DW_AT_byte_size, &size);
    c->classes[i].size = size;
    for (size_t b = 0; b < c->classes[i].base_count; b++)
        if (!measure(c, c->classes[i].bases[b].cls, depth + 1))
            return false;
    struct member_facts f = {.align = 1, .pod = true, .only_empty_members = true};
    bool is_class = dwarf_tag(&die) == DW_TAG_class_type, ok = true;
    const char *name = dwarf_diename(&die);
    if (probe_checked_child(&die, &child) == 0) {
        do
            ok = measure_member(c, &child, is_class, name, &f, depth);
        while (ok && probe_checked_siblingof(&child, &child) == 0);
    }
    struct cls *x = &c->classes[i];
    x->has_vptr = f.vptr;
    x->dynamic = f.vptr || f.virtual_fn;
    bool bases_empty = true, bases_may_be_empty = true;
    for (size_t b = 0; b < x->base_count; b++) {
        const struct cls *base = &c->classes[x->bases[b].cls];
        x->dynamic |= x->bases[b].is_virtual || base->dynamic;
        bases_empty &= !x->bases[b].is_virtual && base->empty;
        bases_may_be_empty &= !x->bases[b].is_virtual && base->may_be_empty;
    }
    x->pod = f.pod && x->base_count == 0 && !x->dynamic;
    x->empty = !x->dynamic && !f.data && bases_empty;
    x->may_be_empty = !x->dynamic && f.only_empty_members && bases_may_be_empty;
    x->unknown = f.unknown || dwarf_hasattr(&die, DW_AT_declaration);
    for (size_t b = 0; b < x->base_count; b++)
        x->unknown |= c->classes[x->bases[b].cls].unknown;
    if (x->unknown) /* no sharing claimed on what is not known */
        x->empty = x->may_be_empty = false;
    x->zero_members = f.zero.items;
    x->zero_count = f.zero.count;
    ok = ok && choose_primary(c, i);
    settle_nonvirtual(c, i, &f);
    c->classes[i].measured = ok;
    c->classes[i].measuring = false;
    return ok;
}

uint64_t probe_cxx_base_size(struct cxx_cache *c, Dwarf_Die *cls)
{
    int32_t i = class_index(c, cls);
    if (i < 0 || !measure(c, i, 0))
        return 0;
    return c->classes[i].empty ? 0 : c->classes[i].nvsize;
}

uint64_t probe_cxx_share_size(struct cxx_cache *c, Dwarf_Die *cls)
{
    int32_t i = class_index(c, cls);
    if (i < 0 || !measure(c, i, 0))
        return UINT64_MAX;
    return c->classes[i].least;
}

bool probe_cxx_is_empty(struct cxx_cache *c, Dwarf_Die *cls)
{
    int32_t i = class_index(c, cls);
    return i >= 0 && measure(c, i, 0) && c->classes[i].empty;
}

bool probe_cxx_is_unknown(struct cxx_cache *c, Dwarf_Die *cls)
{
    int32_t i = class_index(c, cls);
    return i < 0 || !measure(c, i, 0) || c->classes[i].unknown;
}

bool probe_cxx_base_unknown(struct cxx_cache *c, Dwarf_Die *cls)
{
    int32_t i = class_index(c, cls);
    if (i < 0 || !measure(c, i, 0))
        return true;
    for (size_t b = 0; b < c->classes[i].base_count; b++)
        if (c->classes[c->classes[i].bases[b].cls].unknown)
            return true;
    return false;
}

/* The classes of the subobjects at the start of class i (itself, its bases at offset 0, and the
 * classes of its members there): an empty base may not share an offset with one of its type. */
static bool at_start(struct cxx_cache *c, int32_t i, struct list *out, int depth)
{
    if (list_find(out, i) >= 0)
        return true; /* met before, with all it holds */
    if (depth > MAX_DEPTH || !list_add(out, i))
        return false;
    const struct cls *x = &c->classes[i];
    for (size_t b = 0; b < x->base_count; b++) {
        const struct base_ref *r = &x->bases[b];
        bool there = r->is_virtual ? x->primary_virtual && x->primary == r->cls : r->offset == 0;
        if (there && !at_start(c, r->cls, out, depth + 1))
            return false;
        x = &c->classes[i];
    }
    for (size_t m = 0; m < x->zero_count; m++) {
        if (!at_start(c, x->zero_members[m], out, depth + 1))
            return false;
        x = &c->classes[i];
    }
    return true;
}

static bool conflicts(const struct list *placed, const struct list *candidate)
{
    for (size_t k = 0; k < candidate->count; k++)
        if (list_find(placed, candidate->items[k]) >= 0)
            return true;
    return false;
}

/* Offsets of the virtual bases that are some class's primary: that class's offset. Walks the
 * subobjects from the complete object down, a class before its bases (so the first class to
 * claim a primary base gets it), until no offset changes. */
static void place_primaries(struct cxx_cache *c, int32_t top, const struct list *order,
                            uint64_t *offsets)
{
    struct work {
        int32_t cls;
        uint64_t at;
    } stack[MAX_DEPTH * 8];
    for (size_t round = 0; round <= order->count; round++) {
        bool changed = false;
        size_t depth = 0, visits = 0;
        stack[depth++] = (struct work){top, 0};
        while (depth > 0 && visits++ < MAX_VISITS) {
            struct work w = stack[--depth];
            const struct cls *x = &c->classes[w.cls];
            int32_t p = x->primary_virtual ? list_find(order, x->primary) : -1;
            if (p >= 0 && offsets[p] == UNKNOWN) {
                offsets[p] = w.at;
                changed = true;
            }
            /* Push in reverse, so that the first base is walked first. */
            for (size_t b = x->base_count; b-- > 0 && depth < sizeof stack / sizeof *stack;) {
                const struct base_ref *r = &x->bases[b];
                int32_t v = r->is_virtual ? list_find(order, r->cls) : -1;
                if (!r->is_virtual)
                    stack[depth++] = (struct work){r->cls, w.at + r->offset};
                else if (v >= 0 && offsets[v] != UNKNOWN)
                    stack[depth++] = (struct work){r->cls, offsets[v]};
            }
        }
        if (!changed)
            return;
    }
}

/* ABI 2.4 III: the virtual bases that are nobody's primary, in inheritance graph order: an
 * empty one at offset 0 when no subobject of its type is there, the others at the data size so
 * far rounded up to their nvalign. */
static bool place_others(struct cxx_cache *c, int32_t top, const struct list *order,
                         const bool *primary, uint64_t *offsets)
{
    struct list start = {0};
    bool ok = at_start(c, top, &start, 0);
    uint64_t dsize = c->classes[top].dsize;
    for (size_t k = 0; ok && k < order->count; k++) {
        if (primary[k])
            continue;
        const struct cls *v = &c->classes[order->items[k]];
        if (v->empty) {
            struct list mine = {0};
            ok = at_start(c, order->items[k], &mine, 0);
            if (ok && !conflicts(&start, &mine)) {
                offsets[k] = 0;
                for (size_t m = 0; ok && m < mine.count; m++)
                    ok = list_add(&start, mine.items[m]);
            } else {
                offsets[k] = probe_round_up(dsize, v->nvalign);
            }
            free(mine.items);
            continue;
        }
        offsets[k] = probe_round_up(dsize, v->nvalign);
        dsize = offsets[k] + v->nvsize;
    }
    free(start.items);
    return ok;
}

int probe_cxx_virtual_bases(struct cxx_cache *c, Dwarf_Die *cls, struct cxx_vbase **out)
{
    *out = NULL;
    int32_t top = class_index(c, cls);
    if (top < 0 || !measure(c, top, 0))
        return top < 0 ? -1 : 0; /* unmeasurable (corrupt): no virtual bases claimed */
    struct list order = {0}, graph = {0};
    if (!virtual_order(c, top, &order, 0) || !graph_classes(c, top, &graph, 0) ||
        !list_add(&graph, top)) {
        free(order.items);
        free(graph.items);
        return -1;
    }
    int n = (int)order.count;
    uint64_t *offsets = malloc((order.count + 1) * sizeof *offsets);
    bool *primary = calloc(order.count + 1, sizeof *primary);
    *out = n > 0 ? malloc(order.count * sizeof **out) : NULL;
    bool ok = offsets && primary && (n == 0 || *out);
    for (size_t k = 0; ok && k < order.count; k++)
        offsets[k] = UNKNOWN;
    for (size_t g = 0; ok && g < graph.count; g++) {
        const struct cls *x = &c->classes[graph.items[g]];
        int32_t p = x->primary_virtual ? list_find(&order, x->primary) : -1;
        if (p >= 0)
            primary[p] = true;
    }
    ok = ok && place_others(c, top, &order, primary, offsets);
    if (ok)
        place_primaries(c, top, &order, offsets);
    for (int k = 0; ok && k < n; k++) {
        const struct cls *v = &c->classes[order.items[k]];
        (*out)[k] = (struct cxx_vbase){v->die, offsets[k] == UNKNOWN ? 0 : offsets[k],
                                       v->empty ? 0 : v->nvsize};
    }
    free(offsets);
    free(primary);
    free(order.items);
    free(graph.items);
    if (!ok) {
        free(*out);
        *out = NULL;
        return -1;
    }
    return n;
}
