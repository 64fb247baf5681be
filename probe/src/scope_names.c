/* Qualified names of DIEs from an index of each unit's scopes. The index lists, in DWARF order,
 * every namespace, class and function definition of a unit with the range of offsets its
 * children take; the scope of a DIE is the innermost range holding its offset. A few units are
 * kept (a type refers into its own unit, and sometimes into a type unit), the least recently used
 * one is dropped past that. */
#include "scope_names.h"

#include <dwarf.h>
#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate_tag.h"
#include "die_table.h"
#include "dwarf_errors.h"
#include "type_names.h"

#define UNITS_KEPT 16 /* more only while all are in use */
#define NO_END UINT64_MAX

struct scope {
    Dwarf_Die die;
    Dwarf_Off start, end; /* the DIE's offset, and the offset just past its children */
    int32_t parent;       /* the enclosing scope, -1 at the top of the unit */
    bool named;           /* prefix and local are computed */
    bool local;
    char *prefix; /* this scope's own qualified name ("ns::Outer", "f()"), or NULL */
};

struct named {
    const void *die;
    char *name;
    bool local;
};

struct unit {
    const void *key; /* the unit DIE's address */
    bool cplusplus;
    unsigned long used; /* when last asked for: the least recent is dropped */
    int busy;           /* names of it are being computed: it may not be dropped */
    struct scope *scopes;
    size_t scope_count, scope_capacity;
    Dwarf_Die *types;
    size_t type_count, type_capacity;
    struct die_table names; /* of struct named */
};

static _Thread_local struct {
    struct unit **units;
    size_t count, capacity;
    unsigned long clock;
    const void *pinned; /* the unit being walked: never dropped under its walker */
} kept;

static void unit_free(struct unit *u)
{
    if (u == NULL)
        return;
    for (size_t i = 0; i < u->scope_count; i++)
        free(u->scopes[i].prefix);
    struct named *names = u->names.slots;
    for (size_t i = 0; i < u->names.capacity; i++)
        free(names[i].name);
    free(u->scopes);
    free(u->types);
    die_table_free(&u->names);
    free(u);
}

void scope_names_reset(void)
{
    for (size_t i = 0; i < kept.count; i++)
        unit_free(kept.units[i]);
    free(kept.units);
    memset(&kept, 0, sizeof kept);
}

static bool is_cplusplus(Dwarf_Die *root)
{
    Dwarf_Attribute attr;
    Dwarf_Word lang = 0;
    if (dwarf_attr(root, DW_AT_language, &attr) == NULL || dwarf_formudata(&attr, &lang) != 0)
        return false;
    return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
           lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

static bool push_scope(struct unit *u, Dwarf_Die *die, int32_t parent)
{
    if (u->scope_count == u->scope_capacity) {
        size_t capacity = u->scope_capacity ? 2 * u->scope_capacity : 64;
        struct scope *grown = realloc(u->scopes, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        u->scopes = grown;
        u->scope_capacity = capacity;
    }
    u->scopes[u->scope_count++] =
        (struct scope){*die, dwarf_dieoffset(die), NO_END, parent, false, false, NULL};
    return true;
}

static bool push_type(struct unit *u, Dwarf_Die *die)
{
    if (u->type_count == u->type_capacity) {
        size_t capacity = u->type_capacity ? 2 * u->type_capacity : 64;
        Dwarf_Die *grown = realloc(u->types, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        u->types = grown;
        u->type_capacity = capacity;
    }
    u->types[u->type_count++] = *die;
    return true;
}

/* Whether the walk enters this child: namespaces and classes always (C has no namespaces, and
 * there only named structs, as before); in C++ also function definitions and their blocks, for
 * the classes local to them. */
static bool enters(const struct unit *u, Dwarf_Die *child, int tag)
{
    if (tag == DW_TAG_namespace)
        return true;
    if (is_aggregate_tag(tag))
        return u->cplusplus || dwarf_hasattr(child, DW_AT_name);
    if (!u->cplusplus || !dwarf_haschildren(child))
        return false;
    if (tag == DW_TAG_subprogram)
        return !dwarf_hasattr(child, DW_AT_declaration);
    return tag == DW_TAG_lexical_block;
}

static bool index_children(struct unit *u, Dwarf_Die *die, int32_t parent, int depth)
{
    Dwarf_Die child;
    if (depth > 64 || checked_child(die, &child) != 0)
        return true;
    int32_t previous = -1; /* the scope entry whose end is the offset of the next child */
    do {
        if (previous >= 0) {
            u->scopes[previous].end = dwarf_dieoffset(&child);
            previous = -1;
        }
        int tag = dwarf_tag(&child);
        if ((is_aggregate_tag(tag) || tag == DW_TAG_typedef) && !push_type(u, &child))
            return false;
        if (!enters(u, &child, tag))
            continue;
        /* (A lexical block is a scope too, one without a name: its children's prefix is the
         * function's, and its span ends theirs.) */
        if (!push_scope(u, &child, parent))
            return false;
        previous = (int32_t)(u->scope_count - 1);
        if (!index_children(u, &child, previous, depth + 1))
            return false;
    } while (checked_siblingof(&child, &child) == 0);
    return true;
}

static struct unit *unit_build(Dwarf_Die *root)
{
    struct unit *u = calloc(1, sizeof *u);
    if (u == NULL)
        return NULL;
    u->key = root->addr;
    u->cplusplus = is_cplusplus(root);
    if (!index_children(u, root, -1, 0)) {
        unit_free(u);
        return NULL;
    }
    /* The last child of a scope ends where its parent does (entries follow their parents). */
    for (size_t i = 0; i < u->scope_count; i++) {
        struct scope *s = &u->scopes[i];
        if (s->end == NO_END && s->parent >= 0)
            s->end = u->scopes[s->parent].end;
    }
    return u;
}

/* Where a new unit's index goes: a free place, else that of the least recently used unit no
 * one is reading (dropped), else a new place. */
static struct unit **place_for_unit(void)
{
    struct unit **victim = NULL;
    for (size_t i = 0; i < kept.count && kept.count >= UNITS_KEPT; i++) {
        struct unit *u = kept.units[i];
        if (u->busy == 0 && u->key != kept.pinned && (victim == NULL || u->used < (*victim)->used))
            victim = &kept.units[i];
    }
    if (victim != NULL) {
        unit_free(*victim);
        *victim = NULL;
        return victim;
    }
    if (kept.count == kept.capacity) {
        size_t capacity = kept.capacity ? 2 * kept.capacity : UNITS_KEPT;
        struct unit **grown = realloc(kept.units, capacity * sizeof *grown);
        if (grown == NULL)
            return NULL;
        kept.units = grown;
        kept.capacity = capacity;
    }
    kept.units[kept.count] = NULL;
    return &kept.units[kept.count++];
}

/* The index of the unit whose root DIE is root, built on first need. */
static struct unit *unit_of_root(Dwarf_Die *root)
{
    for (size_t i = 0; i < kept.count; i++) {
        struct unit *u = kept.units[i];
        if (u != NULL && u->key == root->addr) {
            u->used = ++kept.clock;
            return u;
        }
    }
    struct unit *u = unit_build(root);
    struct unit **place = u ? place_for_unit() : NULL;
    if (place == NULL) {
        unit_free(u);
        return NULL;
    }
    *place = u;
    u->used = ++kept.clock;
    return u;
}

static struct unit *unit_of(Dwarf_Die *die)
{
    Dwarf_Die root;
    if (dwarf_diecu(die, &root, NULL, NULL) == NULL)
        return NULL;
    return unit_of_root(&root);
}

bool scope_unit_types(Dwarf_Die *root, const Dwarf_Die **types, size_t *count)
{
    kept.pinned = NULL;
    struct unit *u = unit_of_root(root);
    if (u == NULL)
        return false;
    kept.pinned = u->key;
    *types = u->types;
    *count = u->type_count;
    return true;
}

/* The innermost scope holding offset (-1: the top of the unit). */
static int32_t enclosing(const struct unit *u, Dwarf_Off offset)
{
    size_t lo = 0, hi = u->scope_count; /* the first entry starting at or after offset */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->scopes[mid].start < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    int32_t i = (int32_t)lo - 1;
    while (i >= 0 && u->scopes[i].end <= offset)
        i = u->scopes[i].parent;
    return i;
}

static char *joined(const char *prefix, const char *name)
{
    size_t p = prefix ? strlen(prefix) : 0, n = strlen(name);
    char *s = malloc(p + n + 3);
    if (s == NULL)
        return NULL;
    if (p) {
        memcpy(s, prefix, p);
        memcpy(s + p, "::", 2);
        p += 2;
    }
    memcpy(s + p, name, n + 1);
    return s;
}

/* Whether a type's scopes are private to its unit: it is in an anonymous namespace or in a
 * function without external linkage. */
static bool private_scope(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    if (tag == DW_TAG_namespace)
        return dwarf_diename(die) == NULL;
    Dwarf_Attribute attr;
    bool external = false;
    if (tag == DW_TAG_subprogram && dwarf_attr_integrate(die, DW_AT_external, &attr) != NULL)
        dwarf_formflag(&attr, &external);
    return tag == DW_TAG_subprogram && !external;
}

/* "f(int)" for a function without a linkage name (main, or a producer that omits it): its
 * parameter types as the type spelling writes them. */
static char *function_by_parameters(const char *name, Dwarf_Die *die)
{
    size_t size = strlen(name) + 3, len = 0;
    char *s = malloc(size);
    if (s == NULL)
        return NULL;
    len = (size_t)snprintf(s, size, "%s(", name);
    Dwarf_Die child;
    bool first = true;
    if (checked_child(die, &child) == 0) {
        do {
            Dwarf_Attribute attr;
            Dwarf_Die type;
            if (dwarf_tag(&child) != DW_TAG_formal_parameter ||
                dwarf_hasattr(&child, DW_AT_artificial) ||
                dwarf_attr_integrate(&child, DW_AT_type, &attr) == NULL ||
                checked_formref_die(&attr, &type) == NULL)
                continue;
            char *spelled = probe_type_name(&type);
            for (char *p = spelled ? strstr(spelled, " *") : NULL; p; p = strstr(p, " *"))
                memmove(p, p + 1, strlen(p)); /* "char**" as the demangler and gdb write it */
            for (char *p = spelled ? strstr(spelled, " &") : NULL; p; p = strstr(p, " &"))
                memmove(p, p + 1, strlen(p));
            size_t need = len + (spelled ? strlen(spelled) : 1) + 4;
            char *grown = need > size ? realloc(s, size = 2 * need) : s;
            if (grown == NULL) {
                free(spelled);
                free(s);
                return NULL;
            }
            s = grown;
            len += (size_t)snprintf(s + len, size - len, "%s%s", first ? "" : ", ",
                                    spelled ? spelled : "?");
            first = false;
            free(spelled);
        } while (checked_siblingof(&child, &child) == 0);
    }
    snprintf(s + len, size - len, ")");
    return s;
}

/* "ns::S::f(int) const" from the function's linkage name, as gdb names the scope of its local
 * classes; NULL when it has none or it does not demangle. */
static char *function_by_linkage(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *linkage = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) != NULL ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) != NULL)
        linkage = dwarf_formstring(&attr);
    return linkage ? cplus_demangle(linkage, DMGL_PARAMS | DMGL_ANSI | DMGL_RET_DROP) : NULL;
}

/* A class's own name: its DW_AT_name, the name of the definition a type-unit declaration stands
 * for (clang's nested types), or the typedef name a C++ anonymous class takes for linkage
 * (DW_AT_linkage_name "6anon_t"). NULL for an unnamed class. */
static const char *class_name(Dwarf_Die *die, size_t *length)
{
    const char *name = checked_diename(die);
    Dwarf_Attribute attr;
    Dwarf_Die target;
    if (name == NULL && dwarf_attr(die, DW_AT_signature, &attr) != NULL &&
        checked_formref_die(&attr, &target) != NULL)
        name = checked_diename(&target);
    if (name != NULL) {
        *length = strlen(name);
        return name;
    }
    if (dwarf_attr(die, DW_AT_linkage_name, &attr) == NULL)
        return NULL;
    const char *linkage = dwarf_formstring(&attr);
    char *rest;
    unsigned long n = linkage ? strtoul(linkage, &rest, 10) : 0;
    if (n == 0 || rest == linkage || strlen(rest) < n)
        return NULL;
    *length = n;
    return rest;
}

static const char *scope_prefix(struct unit *u, int32_t i, bool *local);

/* A DIE's own part of a name, appended to prefix: a new string, or NULL when unnamed or out of
 * memory (*failed says which). */
static char *own_name(Dwarf_Die *die, const char *prefix, bool *local, bool *failed)
{
    int tag = dwarf_tag(die);
    *failed = false;
    if (tag == DW_TAG_namespace) {
        const char *name = checked_diename(die);
        char *s = joined(prefix, name ? name : "(anonymous namespace)");
        *local |= name == NULL;
        *failed = s == NULL;
        return s;
    }
    if (tag == DW_TAG_subprogram) {
        *local |= private_scope(die);
        char *s = function_by_linkage(die);
        if (s == NULL) {
            const char *name = checked_diename(die);
            char *relative = function_by_parameters(name ? name : "?", die);
            s = relative ? joined(prefix, relative) : NULL;
            free(relative);
        }
        *failed = s == NULL;
        return s;
    }
    size_t length = 0;
    const char *name = is_aggregate_tag(tag) ? class_name(die, &length) : checked_diename(die);
    if (name == NULL)
        return NULL;
    char *own = strndup(name, is_aggregate_tag(tag) ? length : strlen(name));
    char *s = own ? joined(prefix, own) : NULL;
    free(own);
    *failed = s == NULL;
    return s;
}

/* The declaration a definition completes, whose scopes are the definition's: GCC defines the
 * types of a type unit, out-of-line nested classes and functions at the top of their unit.
 * (A function with a linkage name is named from it instead.) */
static Dwarf_Die *specification(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute attr;
    if (dwarf_attr(die, DW_AT_specification, &attr) == NULL ||
        (dwarf_tag(die) == DW_TAG_subprogram &&
         (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) != NULL ||
          dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) != NULL)))
        return NULL;
    dwarf_attr(die, DW_AT_specification, &attr);
    return checked_formref_die(&attr, out);
}

static bool qualified(Dwarf_Die *die, struct scope_name *out, int depth);

/* The qualified name of scope i, computed on first need. */
static const char *scope_prefix(struct unit *u, int32_t i, bool *local)
{
    if (i < 0)
        return NULL;
    struct scope *s = &u->scopes[i];
    if (!s->named) {
        bool inner_local = false, failed = false;
        const char *outer = scope_prefix(u, s->parent, &inner_local);
        Dwarf_Die declaration;
        struct scope_name spec;
        if (specification(&s->die, &declaration) != NULL && qualified(&declaration, &spec, 1)) {
            s->prefix = spec.name ? strdup(spec.name) : NULL;
            inner_local |= spec.unit_local;
        } else {
            s->prefix = own_name(&s->die, outer, &inner_local, &failed);
        }
        /* An unnamed class lends its children the name of what holds it. */
        if (s->prefix == NULL && !failed && outer != NULL)
            s->prefix = strdup(outer);
        s->local = inner_local;
        s->named = true;
    }
    *local |= s->local;
    return s->prefix;
}

static bool qualified_in(struct unit *u, Dwarf_Die *die, struct scope_name *out, int depth)
{
    struct named *slot = die_table_slot(&u->names, die->addr);
    if (slot->die != NULL) {
        out->name = slot->name;
        out->unit_local = slot->local;
        return true;
    }
    bool local = false, failed = false;
    char *name = NULL;
    Dwarf_Die declaration;
    struct scope_name spec;
    if (depth < 8 && specification(die, &declaration) != NULL) {
        if (!qualified(&declaration, &spec, depth + 1))
            return false;
        name = spec.name ? strdup(spec.name) : NULL;
        failed = spec.name != NULL && name == NULL;
        local = spec.unit_local;
    } else {
        const char *prefix = scope_prefix(u, enclosing(u, dwarf_dieoffset(die)), &local);
        name = own_name(die, prefix, &local, &failed);
    }
    /* Computing the name may have named other DIEs of this unit: find the slot again. */
    if (failed || !die_table_room(&u->names, sizeof(struct named))) {
        free(name);
        return false;
    }
    slot = die_table_slot(&u->names, die->addr);
    if (slot->die == NULL) {
        *slot = (struct named){die->addr, name, local};
        u->names.count++;
    } else {
        free(name);
    }
    out->name = slot->name;
    out->unit_local = slot->local;
    return true;
}

static bool qualified(Dwarf_Die *die, struct scope_name *out, int depth)
{
    out->name = NULL;
    out->unit_local = false;
    struct unit *u = unit_of(die);
    if (u == NULL)
        return false;
    if (!u->cplusplus) {
        out->name = checked_diename(die);
        return true;
    }
    if (!die_table_room(&u->names, sizeof(struct named)))
        return false;
    u->busy++;
    bool ok = qualified_in(u, die, out, depth);
    u->busy--;
    return ok;
}

bool scope_name_of(Dwarf_Die *die, struct scope_name *out)
{
    return qualified(die, out, 0);
}
