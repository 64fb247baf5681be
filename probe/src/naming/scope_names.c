/* Qualified names of DIEs from an index of each unit's scopes. The index lists, in DWARF order,
 * every namespace, class and function definition of a unit with the range of offsets its
 * children take; the scope of a DIE is the innermost range holding its offset. A few units are
 * kept (a type refers into its own unit, and sometimes into a type unit), the least recently used
 * one is dropped past that. */
#include "probe_naming.h"

#include <dwarf.h>
#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"

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
    bool scoped; /* names are qualified by their scopes: C++, and Rust's modules */
    bool type_unit;
    unsigned long used; /* when last asked for: the least recent is dropped */
    int busy;           /* names of it are being computed: it may not be dropped */
    struct scope *scopes;
    size_t scope_count, scope_capacity;
    Dwarf_Die *types;
    size_t type_count, type_capacity;
    struct die_table names;    /* of struct named */
    struct die_table closures; /* of struct closure: what numbering lambdas needs */
};

/* What numbering a lambda's closure takes: its parameters and where it is in the source. */
struct closure {
    const void *die;
    bool is_closure;
    char *params; /* the demangler's spelling, or "?" when the call operator is missing */
    int line, column;
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
    struct closure *closures = u->closures.slots;
    for (size_t i = 0; i < u->closures.capacity; i++)
        free(closures[i].params);
    free(u->scopes);
    free(u->types);
    probe_die_table_free(&u->names);
    probe_die_table_free(&u->closures);
    free(u);
}

void probe_scope_names_reset(void)
{
    probe_function_defs_reset();
    probe_stand_ins_reset();
    probe_cxx_names_reset();
    for (size_t i = 0; i < kept.count; i++)
        unit_free(kept.units[i]);
    free(kept.units);
    memset(&kept, 0, sizeof kept);
}

static bool push_scope(struct unit *u, Dwarf_Die *die, int32_t parent)
{
    if (!array_reserve(&u->scopes, &u->scope_capacity, u->scope_count + 1, sizeof *u->scopes))
        return false;
    u->scopes[u->scope_count++] =
        (struct scope){*die, dwarf_dieoffset(die), NO_END, parent, false, false, NULL};
    return true;
}

static bool push_type(struct unit *u, Dwarf_Die *die)
{
    if (!array_reserve(&u->types, &u->type_capacity, u->type_count + 1, sizeof *u->types))
        return false;
    u->types[u->type_count++] = *die;
    return true;
}

/* Whether the walk enters this child: namespaces and classes always (C has no namespaces, and
 * there only named structs, as before); in C++ also function definitions and their blocks, for
 * the classes local to them, and in type units function declarations outside classes (gcc
 * copies a lambda's closure there, under a declaration of its function). */
static bool enters(const struct unit *u, Dwarf_Die *child, int tag, bool in_class)
{
    if (tag == DW_TAG_namespace)
        return true;
    if (is_aggregate_tag(tag))
        return u->cplusplus || dwarf_hasattr(child, DW_AT_name);
    if (!u->cplusplus || !dwarf_haschildren(child))
        return false;
    if (tag == DW_TAG_subprogram)
        return (u->type_unit && !in_class) || !dwarf_hasattr(child, DW_AT_declaration);
    return tag == DW_TAG_lexical_block;
}

/* (copies: below a function declaration, where gcc's type units copy what is defined in a
 * compile unit; not listed as the unit's types. *end: the null entry that closed die's children,
 * or NULL when the walk did not get there.) */
static bool index_children(struct unit *u, Dwarf_Die *die, int32_t parent, int depth, bool copies,
                           const void **end)
{
    Dwarf_Die child;
    *end = NULL;
    if (depth > 64 || probe_checked_child(die, &child) != 0)
        return true;
    int32_t previous = -1; /* the scope entry whose end is the offset of the next child */
    for (;;) {
        if (previous >= 0) {
            u->scopes[previous].end = dwarf_dieoffset(&child);
            previous = -1;
        }
        int tag = dwarf_tag(&child);
        const void *children_end = NULL; /* (the next step goes right past them) */
        if ((is_aggregate_tag(tag) || tag == DW_TAG_typedef) && !copies && !push_type(u, &child))
            return false;
        /* (A lexical block is a scope too, one without a name: its children's prefix is the
         * function's, and its span ends theirs.) */
        if (enters(u, &child, tag, is_aggregate_tag(dwarf_tag(die)))) {
            if (!push_scope(u, &child, parent))
                return false;
            previous = (int32_t)(u->scope_count - 1);
            bool declared = tag == DW_TAG_subprogram && dwarf_hasattr(&child, DW_AT_declaration);
            if (!index_children(u, &child, previous, depth + 1, copies || declared, &children_end))
                return false;
        }
        if (probe_checked_next(&child, children_end, &child, end) != 0)
            return true;
    }
}

static struct unit *unit_build(Dwarf_Die *root)
{
    struct unit *u = calloc(1, sizeof *u);
    if (u == NULL)
        return NULL;
    u->key = root->addr;
    u->cplusplus = probe_unit_is_cxx(root);
    u->scoped = u->cplusplus || probe_unit_is_rust(root);
    u->type_unit = dwarf_tag(root) == DW_TAG_type_unit;
    const void *end;
    if (!index_children(u, root, -1, 0, false, &end)) {
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
    if (!array_reserve(&kept.units, &kept.capacity, kept.count + 1, sizeof *kept.units))
        return NULL;
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

bool probe_scope_unit_types(Dwarf_Die *root, const Dwarf_Die **types, size_t *count)
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
    const char *name = probe_checked_diename(die);
    Dwarf_Attribute attr;
    Dwarf_Die target;
    if (name == NULL && dwarf_attr(die, DW_AT_signature, &attr) != NULL &&
        probe_checked_formref_die(&attr, &target) != NULL)
        name = probe_checked_diename(&target);
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
static bool qualified(Dwarf_Die *die, struct scope_name *out, int depth);

/* ---- lambdas ---------------------------------------------------------------------------- */

/* The scope lambdas are numbered in: the innermost scope holding offset that is not a block. */
static int32_t lambda_context(struct unit *u, Dwarf_Off offset)
{
    int32_t i = enclosing(u, offset);
    while (i >= 0 && dwarf_tag(&u->scopes[i].die) == DW_TAG_lexical_block)
        i = u->scopes[i].parent;
    return i;
}

/* What numbering needs of an unnamed class of the unit, worked out once; NULL out of memory.
 * (The entry moves when the table grows: copy what is needed before the next call.) */
static const struct closure *closure_info(struct unit *u, Dwarf_Die *die)
{
    if (!die_table_room(&u->closures, sizeof(struct closure)))
        return NULL;
    struct closure *slot = die_table_slot(&u->closures, die->addr);
    if (slot->die != NULL)
        return slot;
    struct closure c = {die->addr, false, NULL, 0, 0};
    Dwarf_Die call;
    bool has_call;
    c.is_closure = probe_closure_of(die, &call, &has_call);
    if (c.is_closure) {
        c.params = has_call ? probe_function_params(&call, probe_scope_name_of) : strdup("?");
        if (c.params == NULL)
            return NULL;
        /* (clang's stand-in for a closure in a type unit has only its operator's place) */
        if (dwarf_decl_line(die, &c.line) != 0 && has_call)
            dwarf_decl_line(&call, &c.line);
        if (dwarf_decl_column(die, &c.column) != 0 && has_call)
            dwarf_decl_column(&call, &c.column);
    }
    if (!die_table_room(&u->closures, sizeof(struct closure))) {
        free(c.params);
        return NULL;
    }
    slot = die_table_slot(&u->closures, die->addr);
    if (slot->die == NULL) {
        *slot = c;
        u->closures.count++;
    } else {
        free(c.params);
    }
    return slot;
}

/* The first of the unit's types at or after offset. */
static size_t first_type_at(const struct unit *u, Dwarf_Off offset)
{
    size_t lo = 0, hi = u->type_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dwarf_dieoffset(&u->types[mid]) < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The scope a DIE's offset is the start of, or -1. */
static int32_t scope_at(const struct unit *u, Dwarf_Off offset)
{
    int32_t i = enclosing(u, offset + 1);
    while (i >= 0 && u->scopes[i].start != offset)
        i = u->scopes[i].parent;
    return i;
}

/* The name of the closure a type unit's copy (die, under function, a declaration) stands for:
 * the one at the same place in the function's definition. NULL when not found (or out of
 * memory: *failed). */
static char *original_closure_name(Dwarf_Die *function, Dwarf_Die *die, bool *failed)
{
    Dwarf_Attribute attr;
    const char *linkage =
        dwarf_formstring(dwarf_attr_integrate(function, DW_AT_linkage_name, &attr));
    int line = 0, column = 0;
    Dwarf_Die defs[4];
    if (linkage == NULL || dwarf_decl_line(die, &line) != 0)
        return NULL;
    dwarf_decl_column(die, &column);
    size_t n = probe_function_definitions(dwarf_cu_getdwarf(die->cu), linkage, defs, 4);
    for (size_t d = 0; d < n; d++) {
        struct unit *du = unit_of(&defs[d]);
        int32_t scope = du ? scope_at(du, dwarf_dieoffset(&defs[d])) : -1;
        if (scope < 0)
            continue;
        for (size_t i = first_type_at(du, du->scopes[scope].start); i < du->type_count; i++) {
            Dwarf_Die *other = &du->types[i];
            int other_line = 0, other_column = 0;
            if (dwarf_dieoffset(other) >= du->scopes[scope].end)
                break;
            if (!is_aggregate_tag(dwarf_tag(other)) || dwarf_hasattr(other, DW_AT_name) ||
                dwarf_decl_line(other, &other_line) != 0 || other_line != line)
                continue;
            dwarf_decl_column(other, &other_column);
            struct scope_name original;
            if (other_column != column)
                continue;
            if (!qualified(other, &original, 1)) {
                *failed = true;
                return NULL;
            }
            return original.name ? strdup(original.name) : NULL;
        }
    }
    return NULL;
}

/* The name of the class a type unit's copy copies (stand_ins.c); NULL when not found. */
static char *copy_name(Dwarf_Die *copy, bool *failed)
{
    Dwarf_Die original;
    struct scope_name named;
    if (!probe_original_of_copy(copy, &original))
        return NULL;
    if (!qualified(&original, &named, 1)) {
        *failed = true;
        return NULL;
    }
    char *s = named.name ? strdup(named.name) : NULL;
    *failed = named.name != NULL && s == NULL;
    return s;
}

/* Whether die is a function DIE that says nothing of which function it is: clang puts classes
 * local to a function with external linkage under one in type units, and sometimes a closure
 * under one in a compile unit. */
static bool is_nameless_function(Dwarf_Die *die)
{
    return dwarf_tag(die) == DW_TAG_subprogram && !dwarf_hasattr(die, DW_AT_name) &&
           !dwarf_hasattr(die, DW_AT_linkage_name) && !dwarf_hasattr(die, DW_AT_specification) &&
           !dwarf_hasattr(die, DW_AT_abstract_origin);
}

/* The name of a closure under a nameless function, from its call operator's definition's
 * linkage name ("ns::f(int)::{lambda(long)#1}::operator()(long) const" without its operator).
 * NULL when there is none or the demangler cannot read it (a conversion operator template's
 * lambdas): the closure is then unnamed, and a template argument it is stays as its producer
 * wrote it (or out of memory: *failed). */
static char *closure_by_call_definition(Dwarf_Die *die, bool *failed)
{
    Dwarf_Die call, definition;
    bool has_call;
    if (!probe_closure_of(die, &call, &has_call) || !has_call ||
        !probe_function_definition_of(&call, &definition))
        return NULL;
    char *demangled = function_by_linkage(&definition);
    const char *last = demangled ? probe_cxx_last_component(demangled) : NULL;
    char *s = NULL;
    if (last != NULL && last != demangled && strncmp(last, "operator()(", 11) == 0)
        *failed = (s = strndup(demangled, (size_t)(last - demangled) - 2)) == NULL;
    free(demangled);
    return s;
}

/* "{lambda(int)#2}" joined to prefix: lambdas are numbered per scope and parameter list, in
 * source order, as the Itanium C++ ABI (and clang) number them. NULL when die is no closure or
 * out of memory (*failed). */
static char *closure_name(struct unit *u, Dwarf_Die *die, const char *prefix, bool *failed)
{
    const struct closure *c = closure_info(u, die);
    if (c == NULL || !c->is_closure) {
        *failed = c == NULL;
        return NULL;
    }
    const char *params = c->params;
    int line = c->line, column = c->column;
    Dwarf_Off offset = dwarf_dieoffset(die);
    int32_t context = lambda_context(u, offset);
    Dwarf_Die *scope = context >= 0 ? &u->scopes[context].die : NULL;
    if (u->type_unit && scope != NULL && dwarf_tag(scope) == DW_TAG_subprogram &&
        dwarf_hasattr(scope, DW_AT_declaration)) {
        Dwarf_Die function = *scope;
        char *s = original_closure_name(&function, die, failed);
        if (s != NULL || *failed)
            return s;
        if ((s = copy_name(die, failed)) != NULL || *failed)
            return s;
    }
    if (scope != NULL && is_nameless_function(scope)) /* numbered in what, named after what? */
        return closure_by_call_definition(die, failed);
    Dwarf_Off start = context >= 0 ? u->scopes[context].start : 0;
    Dwarf_Off end = context >= 0 ? u->scopes[context].end : NO_END;
    size_t number = 1;
    for (size_t i = first_type_at(u, start); i < u->type_count; i++) {
        Dwarf_Die *other = &u->types[i];
        Dwarf_Off at = dwarf_dieoffset(other);
        if (at >= end)
            break;
        if (at == offset || !is_aggregate_tag(dwarf_tag(other)) ||
            dwarf_hasattr(other, DW_AT_name) || lambda_context(u, at) != context)
            continue;
        const struct closure *o = closure_info(u, other);
        if (o == NULL) {
            *failed = true;
            return NULL;
        }
        bool before = o->line < line || (o->line == line && o->column < column) ||
                      (o->line == line && o->column == column && at < offset);
        number += o->is_closure && before && strcmp(o->params, params) == 0;
    }
    size_t size = strlen(params) + 40;
    char *own = malloc(size);
    if (own != NULL)
        snprintf(own, size, "{lambda(%s)#%zu}", params, number);
    char *s = own ? joined(prefix, own) : NULL;
    free(own);
    *failed = s == NULL;
    return s;
}

/* The closure class a call operator's declaration is in, if it is a lambda's. */
static bool closure_holding(Dwarf_Die *declaration, Dwarf_Die *closure)
{
    struct unit *u = unit_of(declaration);
    int32_t i = u ? enclosing(u, dwarf_dieoffset(declaration)) : -1;
    Dwarf_Die call;
    bool has_call;
    if (i < 0 || !is_aggregate_tag(dwarf_tag(&u->scopes[i].die)))
        return false;
    *closure = u->scopes[i].die;
    return probe_closure_of(closure, &call, &has_call);
}

/* "main::{lambda(int)#1}::operator()(int) const" for a lambda's call operator, whose linkage
 * name, when it has one, numbers lambdas the producer's way (clang's "$_0", g++ 12 per scope
 * only); NULL when function is not one (or out of memory: *failed). */
static char *call_operator_name(Dwarf_Die *function, bool *failed)
{
    Dwarf_Die declaration, closure;
    struct scope_name named;
    if (!probe_closure_call_declaration(function, &declaration) ||
        !closure_holding(&declaration, &closure))
        return NULL;
    if (!qualified(&closure, &named, 1) || named.name == NULL) {
        *failed = named.name != NULL;
        return NULL;
    }
    char *params = probe_function_params(&declaration, probe_scope_name_of);
    size_t size = params ? strlen(named.name) + strlen(params) + 32 : 0;
    char *s = params ? malloc(size) : NULL;
    if (s != NULL)
        snprintf(s, size, "%s::operator()(%s)%s", named.name, params,
                 probe_method_is_const(&declaration) ? " const" : "");
    free(params);
    *failed = s == NULL;
    return s;
}

/* ---- own names -------------------------------------------------------------------------- */

/* A function's part of the names local to it: "ns::f(int)" from its linkage name, a lambda's
 * call operator from its closure, else (gcc gives functions of internal linkage none) its name
 * and parameters, or its plain name when it has C linkage, as the demangler writes the scope of
 * what is local to main or an extern "C" function ("main::L"). */
static char *function_name(Dwarf_Die *die, const char *prefix, bool *failed)
{
    char *s = call_operator_name(die, failed);
    if (s == NULL && !*failed)
        s = function_by_linkage(die);
    if (s != NULL || *failed)
        return s;
    Dwarf_Attribute attr; /* (a definition's name is its declaration's) */
    const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
    char *own_name =
        name ? probe_template_args_canonical(die, name, probe_scope_name_of) : strdup("?");
    char *params = private_scope(die) ? probe_function_params(die, probe_scope_name_of) : NULL;
    size_t size = (own_name ? strlen(own_name) : 0) + (params ? strlen(params) : 0) + 9;
    char *own = own_name ? malloc(size) : NULL;
    if (own != NULL)
        snprintf(own, size, params ? "%s(%s)%s" : "%s", own_name, params,
                 probe_method_is_const(die) ? " const" : "");
    s = own ? joined(prefix, own) : NULL;
    free(own);
    free(own_name);
    free(params);
    *failed = s == NULL;
    return s;
}

/* The DIE whose template parameters a class name's arguments come from: a type-unit
 * declaration's definition. */
static Dwarf_Die *template_source(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute attr;
    *out = *die;
    if (dwarf_attr(die, DW_AT_signature, &attr) != NULL)
        probe_checked_formref_die(&attr, out);
    return out;
}

/* A DIE's own part of a name, appended to prefix: a new string, or NULL when unnamed or out of
 * memory (*failed says which). C++ names are canonical (cxx_names.c). */
static char *own_name(struct unit *u, Dwarf_Die *die, const char *prefix, bool *local, bool *failed)
{
    int tag = dwarf_tag(die);
    *failed = false;
    if (tag == DW_TAG_namespace) {
        const char *name = probe_checked_diename(die);
        char *s = joined(prefix, name ? name : "(anonymous namespace)");
        *local |= name == NULL;
        *failed = s == NULL;
        return s;
    }
    if (tag == DW_TAG_subprogram) {
        *local |= private_scope(die);
        return function_name(die, prefix, failed);
    }
    size_t length = 0;
    const char *name =
        is_aggregate_tag(tag) ? class_name(die, &length) : probe_checked_diename(die);
    if (name == NULL)
        return u->cplusplus && is_aggregate_tag(tag) ? closure_name(u, die, prefix, failed) : NULL;
    char *raw = strndup(name, is_aggregate_tag(tag) ? length : strlen(name));
    Dwarf_Die source;
    char *own =
        raw && u->cplusplus && !probe_cxx_plain_name(raw)
            ? probe_template_args_canonical(template_source(die, &source), raw, probe_scope_name_of)
            : raw;
    if (own != raw)
        free(raw);
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
    return probe_checked_formref_die(&attr, out);
}

/* Whether die is a definition completing a declaration of the same unit whose own part is best
 * taken from the definition: a named class (GCC's type units: only the definition has the
 * template parameters) or a function named by its parameters (GCC's type-unit builds declare a
 * class's methods without them in the compile unit; the out-of-line definition has them). */
static bool completes_here(struct unit *u, Dwarf_Die *die, Dwarf_Die *declaration)
{
    int tag = dwarf_tag(die);
    return (tag == DW_TAG_subprogram ||
            (is_aggregate_tag(tag) && dwarf_hasattr(die, DW_AT_name))) &&
           specification(die, declaration) != NULL && unit_of(declaration) == u;
}

/* The declaration's scopes, the definition's own part. */
static char *completed_name(struct unit *u, Dwarf_Die *die, Dwarf_Die *declaration, bool *local,
                            bool *failed)
{
    const char *prefix = scope_prefix(u, enclosing(u, dwarf_dieoffset(declaration)), local);
    return own_name(u, die, prefix, local, failed);
}

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
        if (completes_here(u, &s->die, &declaration)) {
            s->prefix = completed_name(u, &s->die, &declaration, &inner_local, &failed);
        } else if (specification(&s->die, &declaration) != NULL &&
                   qualified(&declaration, &spec, 1)) {
            s->prefix = spec.name ? strdup(spec.name) : NULL;
            inner_local |= spec.unit_local;
        } else {
            s->prefix = own_name(u, &s->die, outer, &inner_local, &failed);
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

/* Whether scope i is in a function the unit does not name: clang's type units put a class
 * local to a function with external linkage under an empty subprogram DIE. Such a class goes by
 * the name its compile unit's stand-in (a declaration with DW_AT_signature) has, stand_ins.c. */
static bool in_nameless_function(struct unit *u, int32_t i)
{
    for (; i >= 0; i = u->scopes[i].parent) {
        if (u->type_unit && is_nameless_function(&u->scopes[i].die))
            return true;
    }
    return false;
}

/* Whether scope i is in a function declaration of a type unit: g++ copies a class local to a
 * function there (stand_ins.c). */
static bool in_copied_function(struct unit *u, int32_t i)
{
    for (; u->type_unit && i >= 0; i = u->scopes[i].parent) {
        Dwarf_Die *die = &u->scopes[i].die;
        if (dwarf_tag(die) == DW_TAG_subprogram && dwarf_hasattr(die, DW_AT_declaration))
            return true;
    }
    return false;
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
    if (depth < 8 && completes_here(u, die, &declaration)) {
        name = completed_name(u, die, &declaration, &local, &failed);
    } else if (depth < 8 && specification(die, &declaration) != NULL) {
        if (!qualified(&declaration, &spec, depth + 1))
            return false;
        name = spec.name ? strdup(spec.name) : NULL;
        failed = spec.name != NULL && name == NULL;
        local = spec.unit_local;
    } else {
        int32_t scope = enclosing(u, dwarf_dieoffset(die));
        const char *prefix = scope_prefix(u, scope, &local);
        if (in_copied_function(u, scope) && (name = copy_name(die, &failed)) != NULL)
            ;
        else if (!failed && !in_nameless_function(u, scope))
            name = own_name(u, die, prefix, &local, &failed);
        else if (depth < 8 && probe_stand_in_of(die, &declaration) &&
                 qualified(&declaration, &spec, depth + 1) && spec.name != NULL)
            failed = (name = strdup(spec.name)) == NULL;
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
    if (!u->scoped) {
        out->name = probe_checked_diename(die);
        return true;
    }
    if (!die_table_room(&u->names, sizeof(struct named)))
        return false;
    u->busy++;
    bool ok = qualified_in(u, die, out, depth);
    u->busy--;
    return ok;
}

bool probe_scope_name_of(Dwarf_Die *die, struct scope_name *out)
{
    return qualified(die, out, 0);
}

char *probe_type_decl(Dwarf_Die *die, size_t *name_at)
{
    return probe_spell_type(die, name_at, probe_scope_name_of);
}
