/* Spelling of DWARF types as C abstract declarators: walks the type chain (qualifiers, pointers,
 * arrays, function types, typedefs), builds the declarator around the place a name would take,
 * and names aggregates with their enclosing scopes in C++. */
#include <dwarf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_naming.h"

/* A growing string: starts in local, moves to the heap past it. Never copied by value. */
struct text {
    char *buf;
    size_t len, cap;
    bool failed;  /* out of memory: the spelling is abandoned */
    bool through; /* spell what a typedef names instead of its name (as mangled names do) */
    probe_name_of name_of; /* names what it meets (probe_naming.h) */
    char local[192];
};

static void text_init(struct text *t, probe_name_of name_of)
{
    t->buf = t->local;
    t->len = 0;
    t->cap = sizeof t->local;
    t->failed = false;
    t->through = false;
    t->name_of = name_of;
    t->local[0] = '\0';
}

static void text_free(struct text *t)
{
    if (t->buf != t->local)
        free(t->buf);
}

static bool reserve(struct text *t, size_t more)
{
    if (t->len + more < t->cap)
        return true;
    size_t cap = 2 * (t->len + more + 1);
    char *grown = t->buf == t->local ? malloc(cap) : realloc(t->buf, cap);
    if (grown == NULL) {
        t->failed = true;
        return false;
    }
    if (t->buf == t->local)
        memcpy(grown, t->local, t->len + 1);
    t->buf = grown;
    t->cap = cap;
    return true;
}

static void put_n(struct text *t, const char *s, size_t n)
{
    if (!reserve(t, n))
        return;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

static void put(struct text *t, const char *s)
{
    put_n(t, s, strlen(s));
}

/* Puts s before the text (declarators grow outwards: "*" before, "[3]" after). */
static void put_front(struct text *t, const char *s)
{
    size_t n = strlen(s);
    if (!reserve(t, n))
        return;
    memmove(t->buf + n, t->buf, t->len + 1);
    memcpy(t->buf, s, n);
    t->len += n;
}

static bool is_cplusplus(Dwarf_Die *die)
{
    Dwarf_Die cu;
    return dwarf_diecu(die, &cu, NULL, NULL) != NULL && probe_unit_is_cxx(&cu);
}

/* A struct, class, union, enum or typedef by name: "ns::Outer::name", "(anonymous
 * namespace)::S", "f()::Local" in C++ (as t->name_of, scope_names.c's, names them after gdb),
 * "struct name" in C (c_keyword NULL for a typedef). An unnamed one is "struct {...}". */
static void put_tagged(struct text *t, Dwarf_Die *die, const char *c_keyword)
{
    struct scope_name named;
    if (!t->name_of(die, &named)) {
        t->failed = true;
        return;
    }
    if (c_keyword != NULL && (!is_cplusplus(die) || named.name == NULL)) {
        put(t, c_keyword);
        put(t, " ");
    }
    put(t, named.name ? named.name : "{...}");
}

/* The place a declared name takes inside a declarator being built ("*\1", "(*\1)[32]"). */
#define MARK '\001'

static void spell(struct text *t, Dwarf_Die *die, struct text *decl, const char *quals, int depth);

/* The declarator after the type specifiers: "char" "\1[3]", "char" " *\1", "void" " (*\1)(int)". */
static void put_declarator(struct text *t, const struct text *decl)
{
    if (decl->len > 0 && decl->buf[0] != MARK)
        put(t, " ");
    put_n(t, decl->buf, decl->len);
}

/* A pointer or reference: "*" before the declarator, "* const" before a qualified one. */
static void pointer_to(struct text *decl, const char *symbol)
{
    char first = decl->buf[0];
    if ((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_')
        put_front(decl, " "); /* "* const", "S::* *" */
    put_front(decl, symbol);
}

/* Qualifiers met above an array of pointers qualify the pointers ("char * const[3]"). */
static const char *qualify_pointer(struct text *decl, const char *quals)
{
    size_t n = strlen(quals);
    if (n == 0)
        return quals;
    char words[96]; /* quals without its trailing space */
    snprintf(words, sizeof words, "%.*s", (int)(n - 1), quals);
    if (decl->buf[0] != MARK)
        put_front(decl, " ");
    put_front(decl, words);
    return "";
}

/* Arrays and functions bind tighter than pointers: "(*\1)[32]", not "*\1[32]". */
static void group(struct text *decl)
{
    if (decl->buf[0] != MARK && decl->buf[0] != '(') {
        put_front(decl, "(");
        put(decl, ")");
    }
}

static bool is_pointer_like(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    return tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
           tag == DW_TAG_rvalue_reference_type || tag == DW_TAG_ptr_to_member_type;
}

/* The abstract spelling of die alone ("void *"), for a parameter or a member pointer's class. */
static void spell_abstract(struct text *t, Dwarf_Die *die, int depth)
{
    struct text decl, inner;
    text_init(&decl, t->name_of);
    text_init(&inner, t->name_of);
    inner.through = t->through;
    put(&decl, "\001");
    spell(&inner, die, &decl, "", depth);
    char *mark = memchr(inner.buf, MARK, inner.len);
    if (mark != NULL) {
        put_n(t, inner.buf, (size_t)(mark - inner.buf));
        put(t, mark + 1);
    } else {
        put_n(t, inner.buf, inner.len);
    }
    t->failed |= decl.failed | inner.failed;
    text_free(&decl);
    text_free(&inner);
}

/* "(int, void *)", "(const char *, ...)", "(void)" for a C prototype without parameters, "()"
 * for C++ or an unprototyped C function. The implicit this of a method is left out. */
static void put_parameters(struct text *decl, Dwarf_Die *function, int depth)
{
    Dwarf_Die child, type;
    size_t count = 0;
    put(decl, "(");
    if (probe_checked_child(function, &child) == 0) {
        do {
            int tag = dwarf_tag(&child);
            if (tag == DW_TAG_unspecified_parameters) {
                put(decl, count++ ? ", ..." : "...");
            } else if (tag == DW_TAG_formal_parameter && !dwarf_hasattr(&child, DW_AT_artificial)) {
                if (count++)
                    put(decl, ", ");
                if (probe_type_of(&child, &type))
                    spell_abstract(decl, &type, depth + 1);
                else
                    put(decl, "?");
            }
        } while (probe_checked_siblingof(&child, &child) == 0);
    }
    if (count == 0 && dwarf_hasattr(function, DW_AT_prototyped))
        put(decl, "void");
    put(decl, ")");
}

static void put_bounds(struct text *decl, Dwarf_Die *array)
{
    Dwarf_Die child;
    if (probe_checked_child(array, &child) != 0)
        return;
    do {
        if (dwarf_tag(&child) != DW_TAG_subrange_type)
            continue;
        Dwarf_Word count = 0, upper;
        Dwarf_Attribute attr;
        char bound[32];
        if (dwarf_attr(&child, DW_AT_count, &attr) && dwarf_formudata(&attr, &count) == 0)
            snprintf(bound, sizeof bound, "[%llu]", (unsigned long long)count);
        else if (dwarf_attr(&child, DW_AT_upper_bound, &attr) &&
                 dwarf_formudata(&attr, &upper) == 0)
            snprintf(bound, sizeof bound, "[%llu]", (unsigned long long)upper + 1);
        else
            snprintf(bound, sizeof bound, "[]");
        put(decl, bound);
    } while (probe_checked_siblingof(&child, &child) == 0);
}

/* const, volatile, _Atomic, restrict: on a pointer they follow its "*"; otherwise they join
 * the specifiers ("const char"), also through arrays, whose elements they qualify. */
static void spell_qualified(struct text *t, Dwarf_Die *die, struct text *decl, const char *quals,
                            int depth)
{
    int tag = dwarf_tag(die);
    const char *word = tag == DW_TAG_const_type      ? "const"
                       : tag == DW_TAG_volatile_type ? "volatile"
                       : tag == DW_TAG_atomic_type   ? "_Atomic"
                                                     : "restrict";
    Dwarf_Die inner, *target = probe_type_of(die, &inner);
    if (target && is_pointer_like(target)) {
        if (decl->buf[0] != MARK)
            put_front(decl, " ");
        put_front(decl, word);
        spell(t, target, decl, quals, depth + 1);
        return;
    }
    char more[96];
    size_t n = strlen(word);
    bool already = false; /* "const const char" when DWARF qualifies both array and element */
    for (const char *q = strstr(quals, word); q && !already; q = strstr(q + 1, word))
        already = (q == quals || q[-1] == ' ') && q[n] == ' ';
    snprintf(more, sizeof more, "%s%s", quals, already ? "" : word);
    if (!already)
        strncat(more, " ", sizeof more - strlen(more) - 1);
    if (target) {
        spell(t, target, decl, more, depth + 1);
        return;
    }
    put(t, more);
    put(t, "void");
    put_declarator(t, decl);
}

/* Writes the type specifiers of die and the declarator decl built so far around MARK. */
static void spell(struct text *t, Dwarf_Die *die, struct text *decl, const char *quals, int depth)
{
    Dwarf_Die inner, *target;
    int tag = dwarf_tag(die);
    if (depth > 32 || t->failed || decl->failed) {
        put(t, "...");
        put_declarator(t, decl);
        return;
    }
    switch (tag) {
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_atomic_type:
    case DW_TAG_restrict_type:
        spell_qualified(t, die, decl, quals, depth);
        return;
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type:
        quals = qualify_pointer(decl, quals);
        pointer_to(decl, tag == DW_TAG_pointer_type     ? "*"
                         : tag == DW_TAG_reference_type ? "&"
                                                        : "&&");
        break;
    case DW_TAG_ptr_to_member_type: {
        struct text owner;
        text_init(&owner, t->name_of);
        owner.through = t->through;
        Dwarf_Attribute attr;
        Dwarf_Die cls;
        if (dwarf_attr(die, DW_AT_containing_type, &attr) && probe_checked_formref_die(&attr, &cls))
            spell_abstract(&owner, probe_resolve_signature(&cls), depth + 1);
        else
            put(&owner, "?");
        put(&owner, "::*");
        quals = qualify_pointer(decl, quals);
        pointer_to(decl, owner.buf);
        decl->failed |= owner.failed;
        text_free(&owner);
        break;
    }
    case DW_TAG_array_type:
        group(decl);
        put_bounds(decl, die);
        break;
    case DW_TAG_subroutine_type:
        group(decl);
        put_parameters(decl, die, depth);
        quals = ""; /* a function type takes no qualifiers; its return type starts afresh */
        break;
    case DW_TAG_structure_type:
    case DW_TAG_class_type:
    case DW_TAG_union_type:
    case DW_TAG_enumeration_type:
        put(t, quals);
        put_tagged(t, die,
                   tag == DW_TAG_structure_type ? "struct"
                   : tag == DW_TAG_class_type   ? "class"
                   : tag == DW_TAG_union_type   ? "union"
                                                : "enum");
        put_declarator(t, decl);
        return;
    case DW_TAG_typedef: /* with its scopes: std::string, not string */
        if (t->through && (target = probe_type_of(die, &inner)) != NULL) {
            spell(t, target, decl, quals, depth + 1);
            return;
        }
        put(t, quals);
        put_tagged(t, die, NULL);
        put_declarator(t, decl);
        return;
    default: { /* base types, unspecified types (decltype(nullptr)) */
        const char *name = probe_checked_diename(die);
        /* C++ base types as gdb and clang write them ("unsigned long"); C's as pahole does */
        const char *fundamental = name ? probe_cxx_fundamental(name) : NULL;
        if (fundamental != name && is_cplusplus(die))
            name = fundamental;
        put(t, quals);
        put(t, name ? name : "?");
        put_declarator(t, decl);
        return;
    }
    }
    /* What the pointer points to, the array holds or the function returns: void when absent. */
    target = probe_type_of(die, &inner);
    if (target) {
        spell(t, target, decl, quals, depth + 1);
        return;
    }
    put(t, quals);
    put(t, "void");
    put_declarator(t, decl);
}

static char *type_decl(Dwarf_Die *die, size_t *name_at, bool through, probe_name_of name_of)
{
    struct text t, decl;
    text_init(&t, name_of);
    text_init(&decl, name_of);
    t.through = through;
    put(&decl, "\001");
    Dwarf_Die resolved = *die;
    spell(&t, probe_resolve_signature(&resolved), &decl, "", 0);
    char *out = NULL;
    if (!t.failed && !decl.failed) {
        char *mark = memchr(t.buf, MARK, t.len);
        size_t at = mark ? (size_t)(mark - t.buf) : t.len;
        if (mark)
            memmove(mark, mark + 1, t.len - at);
        out = t.buf == t.local ? strdup(t.buf) : t.buf;
        if (out != NULL && name_at != NULL)
            *name_at = at;
        if (out == t.buf)
            t.buf = t.local; /* handed over */
    }
    text_free(&t);
    text_free(&decl);
    return out;
}

char *probe_spell_type(Dwarf_Die *die, size_t *name_at, probe_name_of name_of)
{
    return type_decl(die, name_at, false, name_of);
}

char *probe_spell_type_resolved(Dwarf_Die *die, probe_name_of name_of)
{
    return type_decl(die, NULL, true, name_of);
}
