/* A class name's template arguments from its template parameter DIEs, where they say more than
 * the name: a value's type (and so its literal's suffix, or its enumeration), a lambda's closure
 * (and so its demangled name). The DIEs are read only for names with such an argument, with
 * libdw's plain calls (a look-up beside the walk, as in closures.c). */
#include "probe_naming.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 32

#ifndef DW_TAG_GNU_template_template_param
#define DW_TAG_GNU_template_template_param 0x4106
#endif
#ifndef DW_TAG_GNU_template_parameter_pack
#define DW_TAG_GNU_template_parameter_pack 0x4107
#endif

static bool is_digits(const char *s, size_t n)
{
    size_t i = n > 0 && s[0] == '-' ? 1 : 0;
    if (i == n)
        return false;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

static bool contains(const char *s, size_t n, const char *what)
{
    size_t w = strlen(what);
    for (size_t i = 0; i + w <= n; i++)
        if (memcmp(s + i, what, w) == 0)
            return true;
    return false;
}

/* An argument a lambda's closure or an unnamed class is in, as gcc or clang spell those. */
static bool names_unnamed(const char *s, size_t n)
{
    return contains(s, n, "<lambda") || contains(s, n, "(lambda at") ||
           contains(s, n, "<unnamed") || contains(s, n, "(unnamed") ||
           contains(s, n, "(anonymous struct") || contains(s, n, "(anonymous union") ||
           contains(s, n, "(anonymous class");
}

/* An argument that may be a value whose type the name does not show: g++'s integers and
 * characters, clang's enumerators (a bare name: which names are types only DWARF tells). */
static bool maybe_untyped_value(const char *s, size_t n)
{
    if (is_digits(s, n) || (n > 0 && s[0] == '\''))
        return true;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == ':'))
            return false;
    static const char *const fundamental[] = {
        "int",    "char", "bool",    "long",    "short",    "unsigned", "signed",   "float",
        "double", "void", "wchar_t", "char8_t", "char16_t", "char32_t", "__int128", NULL};
    for (size_t i = 0; fundamental[i] != NULL; i++)
        if (strlen(fundamental[i]) == n && memcmp(fundamental[i], s, n) == 0)
            return false;
    return n > 0;
}

/* The template parameter DIEs of die, packs flattened, in order; how many (max + 1: more). */
static size_t template_params(Dwarf_Die *die, Dwarf_Die *out, size_t max)
{
    Dwarf_Die child;
    size_t n = 0;
    if (dwarf_child(die, &child) != 0)
        return 0;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_GNU_template_parameter_pack) {
            n += template_params(&child, out + (n < max ? n : max), n < max ? max - n : 0);
        } else if (tag == DW_TAG_template_type_parameter ||
                   tag == DW_TAG_template_value_parameter ||
                   tag == DW_TAG_GNU_template_template_param) {
            if (n < max)
                out[n] = child;
            n++;
        }
    } while (n <= max && dwarf_siblingof(&child, &child) == 0);
    return n;
}

/* The value of a constant of a type byte_size bytes wide, signed or not. */
static bool const_value(Dwarf_Die *param, bool is_signed, Dwarf_Word byte_size, int64_t *value)
{
    Dwarf_Attribute attr;
    Dwarf_Word u;
    if (dwarf_attr(param, DW_AT_const_value, &attr) == NULL)
        return false;
    if (dwarf_whatform(&attr) == DW_FORM_sdata) {
        Dwarf_Sword s;
        if (dwarf_formsdata(&attr, &s) != 0)
            return false;
        *value = s;
        return true;
    }
    if (dwarf_formudata(&attr, &u) != 0)
        return false;
    if (byte_size > 0 && byte_size < 8) {
        u &= (1ull << (8 * byte_size)) - 1;
        if (is_signed && (u >> (8 * byte_size - 1)) & 1)
            u |= ~((1ull << (8 * byte_size)) - 1);
    }
    *value = (int64_t)u;
    return true;
}

/* "(unsigned long)500", "(char)'a'", "true", "(E)0": a value parameter's argument in a form
 * probe_cxx_canonical prints as the demangler does, its value in *value; NULL to keep the name's
 * own. */
static char *value_argument(Dwarf_Die *param, int64_t *value, probe_name_of name_of)
{
    Dwarf_Attribute attr;
    Dwarf_Die type;
    Dwarf_Word size = 0, encoding = 0;
    if (dwarf_attr_integrate(param, DW_AT_type, &attr) == NULL ||
        dwarf_formref_die(&attr, &type) == NULL || dwarf_peel_type(&type, &type) != 0)
        return NULL;
    if (dwarf_attr(&type, DW_AT_signature, &attr) != NULL && /* a type unit's enumeration */
        dwarf_formref_die(&attr, &type) == NULL)
        return NULL;
    if (dwarf_attr(&type, DW_AT_byte_size, &attr) != NULL)
        dwarf_formudata(&attr, &size);
    const char *name = NULL;
    struct scope_name enum_name;
    if (dwarf_tag(&type) == DW_TAG_enumeration_type) {
        if (!name_of(&type, &enum_name) || enum_name.name == NULL)
            return NULL;
        name = enum_name.name;
        encoding = DW_ATE_signed;
    } else if (dwarf_tag(&type) == DW_TAG_base_type && (name = dwarf_diename(&type)) != NULL &&
               dwarf_attr(&type, DW_AT_encoding, &attr) != NULL) {
        dwarf_formudata(&attr, &encoding);
        name = probe_cxx_fundamental(name);
    } else {
        return NULL;
    }
    bool is_signed = encoding == DW_ATE_signed || encoding == DW_ATE_signed_char;
    int64_t v;
    if (!const_value(param, is_signed, size, &v))
        return NULL;
    *value = v;
    char text[512];
    if (encoding == DW_ATE_boolean)
        snprintf(text, sizeof text, "%s", v ? "true" : "false");
    else if (strcmp(name, "char") == 0 && v >= 0x20 && v < 0x7f && v != '\\' && v != '\'')
        snprintf(text, sizeof text, "(char)'%c'", (char)v);
    else if (is_signed)
        snprintf(text, sizeof text, "(%s)%lld", name, (long long)v);
    else
        snprintf(text, sizeof text, "(%s)%llu", name, (unsigned long long)v);
    return strdup(text);
}

/* A type parameter's argument spelled from its type (a closure by its demangled name); NULL,
 * the argument kept as written, when the type has no name to give ("class {...}": a closure of
 * a function DWARF does not name, scope_names.c). */
static char *type_argument(Dwarf_Die *param, probe_name_of name_of)
{
    Dwarf_Attribute attr;
    Dwarf_Die type;
    if (dwarf_attr_integrate(param, DW_AT_type, &attr) == NULL ||
        dwarf_formref_die(&attr, &type) == NULL)
        return NULL;
    char *s = probe_spell_type_resolved(&type, name_of);
    if (s != NULL && (strchr(s, '?') != NULL || strcmp(s, "class {...}") == 0)) {
        free(s);
        return NULL;
    }
    return s;
}

static bool is_literal(const char *s, size_t n)
{
    return is_digits(s, n) || (n > 0 && s[0] == '\'') || (n == 4 && !memcmp(s, "true", 4)) ||
           (n == 5 && !memcmp(s, "false", 5));
}

/* The argument a parameter says more of, or NULL; *mismatch when they cannot be the same
 * argument (g++ leaves out template parameters without a name, so the parameters met are not
 * always the arguments written: those are matched by position only while they agree). */
static char *better_argument(Dwarf_Die *param, const char *arg, size_t len, bool *mismatch,
                             probe_name_of name_of)
{
    int tag = dwarf_tag(param);
    if (tag == DW_TAG_template_type_parameter) {
        *mismatch = is_literal(arg, len);
        return !*mismatch && names_unnamed(arg, len) ? type_argument(param, name_of) : NULL;
    }
    if (tag != DW_TAG_template_value_parameter)
        return NULL;
    int64_t value;
    char *better = value_argument(param, &value, name_of);
    *mismatch = better != NULL && is_digits(arg, len) && strtoll(arg, NULL, 10) != value;
    return better;
}

/* raw with each argument the first m of its n parameters say more of replaced, then canonical;
 * raw canonical as it is when they do not agree. */
static char *completed(const char *raw, const struct cxx_span *args, size_t n, Dwarf_Die *params,
                       size_t m, probe_name_of name_of)
{
    size_t cap = strlen(raw) + 64, len = 0, from = 0;
    char *s = malloc(cap);
    if (s == NULL)
        return NULL;
    for (size_t i = 0; i <= n; i++) {
        size_t to = i < n ? args[i].at : strlen(raw); /* raw as it is up to the argument */
        bool mismatch = false;
        char *better =
            i < m ? better_argument(&params[i], raw + to, args[i].len, &mismatch, name_of) : NULL;
        size_t add = (to - from) + (better ? strlen(better) : 0);
        char *grown = len + add + 1 > cap ? realloc(s, cap = 2 * (len + add + 1)) : s;
        if (grown == NULL || mismatch) {
            free(better);
            free(grown);
            return mismatch ? probe_cxx_canonical(raw) : NULL;
        }
        s = grown;
        memcpy(s + len, raw + from, to - from);
        len += to - from;
        from = to;
        if (better != NULL) {
            memcpy(s + len, better, strlen(better));
            len += strlen(better);
            from = to + args[i].len;
        }
        free(better);
    }
    s[len] = '\0';
    char *canonical = probe_cxx_canonical(s);
    free(s);
    return canonical;
}

char *probe_template_args_canonical(Dwarf_Die *die, const char *raw, probe_name_of name_of)
{
    struct cxx_span args[MAX_ARGS];
    size_t open, n = probe_cxx_template_args(raw, args, MAX_ARGS, &open);
    bool wanted = false;
    for (size_t i = 0; i < n && i < MAX_ARGS && !wanted; i++)
        wanted = maybe_untyped_value(raw + args[i].at, args[i].len) ||
                 names_unnamed(raw + args[i].at, args[i].len);
    Dwarf_Die params[MAX_ARGS];
    size_t m = wanted && n <= MAX_ARGS ? template_params(die, params, MAX_ARGS) : 0;
    if (m == 0 || m > n)
        return probe_cxx_canonical(raw);
    return completed(raw, args, n, params, m, name_of);
}
