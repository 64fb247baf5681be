/* Spelling of DWARF types: walks the type chain (qualifiers, pointers, arrays, typedefs) and
 * names aggregates with their enclosing scopes in C++. */
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "type_names.h"

struct text {
    char buf[512];
    size_t len;
};

static void put(struct text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n >= sizeof t->buf)
        n = sizeof t->buf - 1 - t->len;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

/* A type-unit declaration stands for the definition its DW_AT_signature names. */
static Dwarf_Die *resolve_signature(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    Dwarf_Die target;
    if (dwarf_attr(die, DW_AT_signature, &attr) != NULL && dwarf_formref_die(&attr, &target))
        *die = target;
    return die;
}

static Dwarf_Die *next_type(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(die, DW_AT_type, &attr) == NULL || !dwarf_formref_die(&attr, out))
        return NULL;
    return resolve_signature(out);
}

static bool is_cplusplus(Dwarf_Die *die)
{
    Dwarf_Die cu;
    Dwarf_Word lang = 0;
    Dwarf_Attribute attr;
    if (dwarf_diecu(die, &cu, NULL, NULL) == NULL ||
        dwarf_attr(&cu, DW_AT_language, &attr) == NULL || dwarf_formudata(&attr, &lang) != 0)
        return false;
    return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
           lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

/* "ns::Outer::name" for a C++ aggregate or enum, "struct name" in C. */
static void put_tagged(struct text *t, Dwarf_Die *die, const char *c_keyword)
{
    const char *name = dwarf_diename(die);
    if (!is_cplusplus(die)) {
        put(t, c_keyword);
        put(t, " ");
        put(t, name ? name : "{...}");
        return;
    }
    if (name == NULL) {
        put(t, c_keyword);
        put(t, " {...}");
        return;
    }
    Dwarf_Die *scopes = NULL;
    int n = dwarf_getscopes_die(die, &scopes);
    /* scopes[0] is die itself, the last the CU: print the named ones outermost first. */
    for (int i = n - 1; i >= 1; i--) {
        int tag = dwarf_tag(&scopes[i]);
        const char *scope = dwarf_diename(&scopes[i]);
        if (scope && (tag == DW_TAG_namespace || tag == DW_TAG_structure_type ||
                      tag == DW_TAG_class_type || tag == DW_TAG_union_type)) {
            put(t, scope);
            put(t, "::");
        }
    }
    free(scopes);
    put(t, name);
}

/* Writes the spelling of die; suffix collects array bounds, which follow the name in C. */
static void spell(struct text *t, struct text *suffix, Dwarf_Die *die, int depth)
{
    Dwarf_Die inner;
    if (depth > 16) {
        put(t, "...");
        return;
    }
    switch (dwarf_tag(die)) {
    case DW_TAG_base_type:
    case DW_TAG_typedef:
    case DW_TAG_unspecified_type: {
        const char *name = dwarf_diename(die);
        put(t, name ? name : "?");
        return;
    }
    case DW_TAG_structure_type:
        put_tagged(t, die, "struct");
        return;
    case DW_TAG_class_type:
        put_tagged(t, die, "class");
        return;
    case DW_TAG_union_type:
        put_tagged(t, die, "union");
        return;
    case DW_TAG_enumeration_type:
        put_tagged(t, die, "enum");
        return;
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_atomic_type:
    case DW_TAG_restrict_type: {
        int tag = dwarf_tag(die);
        const char *word = tag == DW_TAG_const_type      ? "const"
                           : tag == DW_TAG_volatile_type ? "volatile"
                           : tag == DW_TAG_atomic_type   ? "_Atomic"
                                                         : "restrict";
        Dwarf_Die *target = next_type(die, &inner);
        if (target && (dwarf_tag(target) == DW_TAG_pointer_type ||
                       dwarf_tag(target) == DW_TAG_reference_type)) {
            spell(t, suffix, target, depth + 1); /* "char * const" */
            put(t, " ");
            put(t, word);
            return;
        }
        put(t, word);
        put(t, " ");
        if (target)
            spell(t, suffix, target, depth + 1);
        else
            put(t, "void");
        return;
    }
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type: {
        Dwarf_Die *target = next_type(die, &inner);
        if (target && dwarf_tag(target) == DW_TAG_subroutine_type)
            put(t, "function");
        else if (target)
            spell(t, suffix, target, depth + 1);
        else
            put(t, "void");
        int tag = dwarf_tag(die);
        put(t, tag == DW_TAG_pointer_type ? " *" : tag == DW_TAG_reference_type ? " &" : " &&");
        return;
    }
    case DW_TAG_array_type: {
        Dwarf_Die child;
        if (dwarf_child(die, &child) == 0) {
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
                put(suffix, bound);
            } while (dwarf_siblingof(&child, &child) == 0);
        }
        Dwarf_Die *element = next_type(die, &inner);
        if (element)
            spell(t, suffix, element, depth + 1);
        else
            put(t, "?");
        return;
    }
    case DW_TAG_subroutine_type:
        put(t, "function");
        return;
    case DW_TAG_ptr_to_member_type:
        put(t, "member pointer");
        return;
    default:
        put(t, "?");
    }
}

char *probe_type_name(Dwarf_Die *die)
{
    struct text t = {.len = 0}, suffix = {.len = 0};
    t.buf[0] = suffix.buf[0] = '\0';
    Dwarf_Die resolved = *die;
    spell(&t, &suffix, resolve_signature(&resolved), 0);
    put(&t, suffix.buf);
    return strdup(t.buf);
}
