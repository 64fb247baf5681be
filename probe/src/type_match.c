/* --type name matching: both sides are compacted (spaces kept only between two words), then the
 * pattern is matched as a glob against the whole name and against each tail of it that starts
 * after a "::" outside template arguments. */
#include "probe/type_match.h"

#include <stdlib.h>
#include <string.h>

#include "probe/layout.h"

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

bool type_pattern_is_glob(const char *pattern)
{
    return strpbrk(pattern, "*?") != NULL;
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

bool type_name_matches(const char *pattern, const char *name)
{
    if (strcmp(pattern, name) == 0 || layout_name_matches(pattern, name))
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
