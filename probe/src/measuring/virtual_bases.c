/* The virtual bases of a complete C++ object, placed by cxx_bases.c and put among its members in
 * offset order. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/layout.h"
#include "probe_measuring.h"

/* The DW_TAG_inheritance child of aggregate that names cls as a virtual base, if one does. */
static bool direct_virtual_base(Dwarf_Die *aggregate, Dwarf_Die *cls, Dwarf_Die *entry)
{
    Dwarf_Die type, peeled;
    if (probe_checked_child(aggregate, entry) != 0)
        return false;
    do {
        if (probe_cxx_is_virtual_inheritance(entry) && probe_type_of(entry, &type) &&
            probe_checked_peel_type(&type, &peeled) == 0 &&
            probe_defined(probe_resolve_signature(&peeled))->addr == cls->addr)
            return true;
    } while (probe_checked_siblingof(entry, entry) == 0);
    return false;
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
                             const struct cxx_vbase *v, struct member_scope scope,
                             probe_members_reader read_members)
{
    struct layout_type block = {.kind = t->kind};
    Dwarf_Die die = v->die, entry;
    Dwarf_Word access = DW_ACCESS_public;
    struct layout_member m = {
        .bit_offset = -1, .depth = scope.depth, .is_base = true, .is_virtual = true};
    m.offset = scope.base + v->offset;
    m.size = v->size;
    m.type_size = probe_type_size(&die, 0);
    m.inline_only = !scope.expand && scope.depth > 0;
    m.is_indirect = !direct_virtual_base(aggregate, &die, &entry);
    if (!m.is_indirect && !probe_udata(&entry, DW_AT_accessibility, &access))
        access = dwarf_tag(aggregate) == DW_TAG_class_type ? DW_ACCESS_private : DW_ACCESS_public;
    m.access = (uint8_t)access;
    m.type = probe_type_decl(&die, &m.name_at);
    m.name = m.type ? member_name(scope.prefix, m.type) : NULL;
    const char *source = probe_defined_in(&die);
    m.defined_in = source ? strdup(source) : NULL;
    if (m.name == NULL || (source && !m.defined_in) || !probe_add_member(&block, m)) {
        free(m.name);
        free(m.type);
        free(m.defined_in);
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
    if (ok && probe_splice_members(t, at, &block))
        return true;
    for (size_t i = 0; i < block.member_count; i++) {
        free(block.members[i].name);
        free(block.members[i].type);
        free(block.members[i].defined_in);
    }
    free(block.members);
    return false;
}

/* The virtual bases of a complete object (Itanium C++ ABI placement, cxx_bases.c). */
bool probe_add_virtual_bases(struct layout_type *t, Dwarf_Die *aggregate, size_t first,
                             struct member_scope scope, probe_members_reader read_members)
{
    struct cxx_cache *cxx = probe_cxx_of(scope.aligns);
    if (cxx == NULL)
        return false;
    if (!probe_cxx_has_virtual_bases(cxx, aggregate) || probe_cxx_is_unknown(cxx, aggregate))
        return true; /* (unknown: placed nowhere rather than misplaced; padding_unknown) */
    struct cxx_vbase *v;
    int n = probe_cxx_virtual_bases(cxx, aggregate, &v);
    bool ok = n >= 0;
    for (int i = 0; ok && i < n; i++)
        ok = add_virtual_base(t, aggregate, first, &v[i], scope, read_members);
    free(v);
    return ok;
}
