/* --type name matching. A name is put in its canonical spelling (cxx_names.c), the one names are
 * printed in, and compared whole and with each tail of the name that starts after a "::" outside
 * template arguments and parameter lists; then matched as a glob (layout_name_matches, which
 * --functions' patterns use too) against the same, both sides compacted (spaces kept only
 * between two words). */
#include "probe/type_match.h"

#include <stdlib.h>
#include <string.h>

#include "probe_walk.h"

/* Shell-style glob with '*' and '?' only; "::" and '<' are ordinary characters. */
bool layout_name_matches(const char *pattern, const char *name)
{
    if (*pattern == '\0')
        return *name == '\0';
    if (*pattern == '*')
        return layout_name_matches(pattern + 1, name) ||
               (*name != '\0' && layout_name_matches(pattern, name + 1));
    if (*name == '\0' || (*pattern != '?' && *pattern != *name))
        return false;
    return layout_name_matches(pattern + 1, name + 1);
}

static bool is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* s without the spaces that do not separate two words: "Pair2< int , 3 >" -> "Pair2<int,3>",
 * "unsigned  int" -> "unsigned int". Into out, which holds strlen(s) + 1 bytes. */
static void compact(const char *s, char *out)
{
    size_t n = 0;
    for (; *s; s++) {
        if (*s != ' ' && *s != '\t') {
            out[n++] = *s;
            continue;
        }
        while (s[1] == ' ' || s[1] == '\t')
            s++;
        if (n > 0 && is_word_char(out[n - 1]) && is_word_char(s[1]))
            out[n++] = ' ';
    }
    out[n] = '\0';
}

static bool matches_compact(const char *pattern, const char *name)
{
    if (layout_name_matches(pattern, name))
        return true;
    int depth = 0; /* inside template arguments (or a parenthesised name) */
    for (const char *p = name; *p; p++) {
        if (*p == '<' || *p == '(')
            depth++;
        else if ((*p == '>' || *p == ')') && depth > 0)
            depth--;
        else if (depth == 0 && p[0] == ':' && p[1] == ':' && layout_name_matches(pattern, p + 2))
            return true;
    }
    return false;
}

/* The canonical spelling of a pattern, from a small cache: a pattern is matched against every
 * type read. NULL when out of memory. */
static const char *canonical_pattern(const char *pattern)
{
    enum { SLOTS = 16 };
    static _Thread_local struct {
        char *pattern, *canonical;
    } cache[SLOTS];
    static _Thread_local unsigned next;
    for (unsigned i = 0; i < SLOTS; i++)
        if (cache[i].pattern != NULL && strcmp(cache[i].pattern, pattern) == 0)
            return cache[i].canonical;
    unsigned i = next++ % SLOTS;
    free(cache[i].pattern);
    free(cache[i].canonical);
    cache[i].pattern = strdup(pattern);
    cache[i].canonical = cache[i].pattern ? probe_cxx_canonical(pattern) : NULL;
    return cache[i].canonical;
}

/* canonical names name, or one of its tails after a "::" at the outermost level. */
static bool names_tail(const char *canonical, const char *name)
{
    for (const char *tail = name; tail != NULL; tail = probe_cxx_next_component(tail))
        if (probe_cxx_names_equivalent(canonical, tail))
            return true;
    return false;
}

bool layout_type_name_matches(const char *pattern, const char *name)
{
    if (strcmp(pattern, name) == 0 || layout_name_matches(pattern, name))
        return true;
    /* ('*' is a glob, or a pointer in a template argument: "Box<char const*>". Both are tried.) */
    const char *canonical = canonical_pattern(pattern);
    if (canonical != NULL && names_tail(canonical, name))
        return true;
    char small_p[256], small_n[512];
    size_t lp = strlen(pattern) + 1, ln = strlen(name) + 1;
    char *p = lp <= sizeof small_p ? small_p : malloc(lp);
    char *n = ln <= sizeof small_n ? small_n : malloc(ln);
    bool match = false;
    if (p != NULL && n != NULL) {
        compact(pattern, p);
        compact(name, n);
        match = matches_compact(p, n);
    }
    if (p != small_p)
        free(p);
    if (n != small_n)
        free(n);
    return match;
}

bool layout_type_matches(const struct layout_set *set, const struct layout_type *t,
                         const char *pattern)
{
    if (layout_type_name_matches(pattern, t->name))
        return true;
    for (size_t i = 0; i < set->alias_count; i++)
        if (strcmp(set->aliases[i].target, t->name) == 0 &&
            layout_type_name_matches(pattern, set->aliases[i].name))
            return true;
    return false;
}
