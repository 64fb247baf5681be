/* Telling lambda closures apart and reading what their demangled name is made of. Only libdw's
 * plain calls: these are look-ups beside the walk, whose checked steps must stay its own
 * (dwarf_errors.c); damage in what they read is found by the walk itself. */
#include "probe_naming.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool named(Dwarf_Die *die, const char *name)
{
    const char *own = dwarf_diename(die);
    return own != NULL && strcmp(own, name) == 0;
}

static bool is_call_operator(Dwarf_Die *die)
{
    const char *own = dwarf_diename(die);
    /* (a generic lambda's operator is a template: "operator()<int>" in gcc) */
    return own != NULL && strncmp(own, "operator()", 10) == 0 &&
           (own[10] == '\0' || own[10] == '<');
}

bool probe_closure_of(Dwarf_Die *die, Dwarf_Die *call, bool *has_call)
{
    Dwarf_Die child;
    bool gcc_lambda = false;
    *has_call = false;
    if (dwarf_hasattr(die, DW_AT_name) || dwarf_child(die, &child) != 0)
        return false;
    do {
        if (dwarf_tag(&child) != DW_TAG_subprogram)
            continue;
        if (named(&child, "<lambda>") || named(&child, "~<lambda>"))
            gcc_lambda = true;
        else if (!*has_call && is_call_operator(&child)) {
            *call = child;
            *has_call = true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    /* clang marks nothing but makes them classes; an unnamed struct with an operator() is not */
    return gcc_lambda || (*has_call && dwarf_tag(die) == DW_TAG_class_type);
}

static Dwarf_Die *type_of_die(Dwarf_Die *die, Dwarf_Die *out)
{
    Dwarf_Attribute attr;
    if (dwarf_attr_integrate(die, DW_AT_type, &attr) == NULL)
        return NULL;
    return dwarf_formref_die(&attr, out);
}

/* One parameter's type, canonical, without the cv-qualifiers at its top, which are no part of
 * a function's type ("char const" is "char" in "{lambda(char)#1}"); NULL when out of memory. */
static char *param_type(Dwarf_Die *param, probe_name_of name_of)
{
    Dwarf_Die type;
    if (type_of_die(param, &type) == NULL)
        return strdup("?");
    for (int i = 0; i < 4 && (dwarf_tag(&type) == DW_TAG_const_type ||
                              dwarf_tag(&type) == DW_TAG_volatile_type);
         i++)
        if (type_of_die(&type, &type) == NULL)
            return strdup("void");
    char *spelled = probe_spell_type_resolved(&type, name_of);
    char *canonical = spelled ? probe_cxx_canonical(spelled) : NULL;
    free(spelled);
    return canonical;
}

#define MAX_AUTO 8

/* A generic lambda's call operator is a template instance ("operator()<stat>"): its parameters
 * of an invented template parameter's type (gcc's "auto:2", which counts across the unit,
 * clang's "z:auto" for a parameter z) are that parameter, "auto:1" for the first, as the
 * demangler names them. */
struct autos {
    char *types[MAX_AUTO]; /* the canonical spelling of each template type argument */
    size_t count;
};

static void autos_of(Dwarf_Die *function, struct autos *a, probe_name_of name_of)
{
    Dwarf_Die child;
    a->count = 0;
    if (dwarf_child(function, &child) != 0)
        return;
    do {
        const char *name = dwarf_diename(&child);
        if (dwarf_tag(&child) == DW_TAG_template_type_parameter && a->count < MAX_AUTO && name &&
            (strncmp(name, "auto", 4) == 0 || strstr(name, ":auto") != NULL))
            a->types[a->count++] = param_type(&child, name_of);
    } while (dwarf_siblingof(&child, &child) == 0);
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == ':';
}

/* type with its first whole occurrence of a template argument replaced by "auto:N". */
static char *with_autos(char *type, const struct autos *a)
{
    for (size_t k = 0; type != NULL && k < a->count; k++) {
        const char *arg = a->types[k];
        size_t n = arg ? strlen(arg) : 0;
        for (char *at = n ? strstr(type, arg) : NULL; at; at = strstr(at + 1, arg)) {
            if ((at > type && word_char(at[-1])) || word_char(at[n]))
                continue;
            char *out = malloc(strlen(type) + 16);
            if (out != NULL)
                sprintf(out, "%.*sauto:%zu%s", (int)(at - type), type, k + 1, at + n);
            free(type);
            return out;
        }
    }
    return type;
}

char *probe_function_params(Dwarf_Die *call, probe_name_of name_of)
{
    size_t len = 0;
    char *out = calloc(1, 1);
    struct autos a;
    Dwarf_Die child;
    if (out == NULL || dwarf_child(call, &child) != 0)
        return out;
    autos_of(call, &a, name_of);
    do {
        int tag = dwarf_tag(&child);
        if ((tag != DW_TAG_formal_parameter || dwarf_hasattr(&child, DW_AT_artificial)) &&
            tag != DW_TAG_unspecified_parameters)
            continue;
        char *type = tag == DW_TAG_formal_parameter ? with_autos(param_type(&child, name_of), &a)
                                                    : strdup("...");
        char *grown = type ? realloc(out, len + strlen(type) + 3) : NULL;
        if (grown == NULL) {
            free(type);
            free(out);
            out = NULL;
            break;
        }
        out = grown;
        len += (size_t)sprintf(out + len, "%s%s", len ? ", " : "", type);
        free(type);
    } while (dwarf_siblingof(&child, &child) == 0);
    for (size_t k = 0; k < a.count; k++)
        free(a.types[k]);
    return out;
}

bool probe_method_is_const(Dwarf_Die *call)
{
    Dwarf_Die child, pointer, pointee;
    if (dwarf_child(call, &child) != 0)
        return false;
    do {
        if (dwarf_tag(&child) != DW_TAG_formal_parameter ||
            !dwarf_hasattr(&child, DW_AT_artificial))
            continue;
        /* this, or gcc's __closure, which is itself const */
        if (type_of_die(&child, &pointer) == NULL)
            return false;
        while (dwarf_tag(&pointer) == DW_TAG_const_type && type_of_die(&pointer, &pointer))
            ;
        return dwarf_tag(&pointer) == DW_TAG_pointer_type &&
               type_of_die(&pointer, &pointee) != NULL && dwarf_tag(&pointee) == DW_TAG_const_type;
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

bool probe_closure_call_declaration(Dwarf_Die *function, Dwarf_Die *declaration)
{
    Dwarf_Attribute attr;
    Dwarf_Die origin = *function;
    /* a concrete instance -> its abstract one -> the declaration in the class */
    for (int i = 0; i < 4; i++) {
        if (dwarf_attr(&origin, DW_AT_abstract_origin, &attr) == NULL &&
            dwarf_attr(&origin, DW_AT_specification, &attr) == NULL)
            break;
        if (dwarf_formref_die(&attr, &origin) == NULL)
            return false;
    }
    if (!is_call_operator(&origin))
        return false;
    *declaration = origin;
    return true;
}
