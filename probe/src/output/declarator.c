/* C declarations from abstract declarators: where the name goes, and the pahole-style split into
 * a specifier column and a declarator column. */
#include "probe_output.h"

#include <stdlib.h>
#include <string.h>

static bool is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The index just past the ')' or '>' that closes the bracket at s[i], or the end of s. */
static size_t skip_balanced(const char *s, size_t i, size_t end)
{
    char open = s[i], close = open == '(' ? ')' : open == '<' ? '>' : ']';
    int depth = 0;
    for (; i < end; i++) {
        if (s[i] == open)
            depth++;
        else if (s[i] == close && --depth == 0)
            return i + 1;
    }
    return end;
}

/* A '(' that groups a declarator ("(*)", "(&)", "(S::*)"), not one inside a name
 * ("(anonymous namespace)", "decltype(nullptr)") or a parameter list. */
static bool is_group(const char *s, size_t open, size_t end)
{
    size_t i = open + 1;
    while (i < end && s[i] == ' ')
        i++;
    if (i < end && (s[i] == '*' || s[i] == '&' || s[i] == '^'))
        return true;
    size_t close = skip_balanced(s, open, end);
    for (size_t j = open + 1; j + 2 < close; j++)
        if (s[j] == ':' && s[j + 1] == ':' && s[j + 2] == '*')
            return true;
    return false;
}

/* The name's place within s[from, end): inside the first declarator group, else before the
 * first '[', else at the end. */
static size_t name_at_in(const char *s, size_t from, size_t end)
{
    for (size_t i = from; i < end;) {
        if (s[i] == '[')
            return i;
        if (s[i] == '(' && is_group(s, i, end))
            return name_at_in(s, i + 1, skip_balanced(s, i, end) - 1);
        i = s[i] == '<' || s[i] == '(' ? skip_balanced(s, i, end) : i + 1;
    }
    return end;
}

/* Where a name goes in a C abstract declarator spelled as type_names.c spells them: before the
 * first '[' of "char *[4]", inside the group of "void (*)(int)", else at the end. Names that hold
 * parentheses ("(anonymous namespace)::S", "decltype(nullptr)", "f()::Local") are skipped. */
static size_t declarator_name_at(const char *type)
{
    return name_at_in(type, 0, strlen(type));
}

/* The first '(' in s[0, n) left open: where the declarator column starts ("void (*" -> 5). */
static size_t open_group(const char *s, size_t n)
{
    size_t opened[64], depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '(' && depth < 64)
            opened[depth++] = i;
        else if (s[i] == ')' && depth > 0)
            depth--;
    }
    return depth > 0 ? opened[0] : n;
}

bool probe_declaration_split(const char *type, size_t name_at, const char *name,
                             struct declaration *out)
{
    size_t len = strlen(type);
    size_t at = name_at ? name_at : declarator_name_at(type);
    if (at > len)
        at = len;
    size_t split = open_group(type, at), spec_end = split;
    while (spec_end > 0 && type[spec_end - 1] == ' ')
        spec_end--;
    /* "(* const" + "name": keep the words apart. */
    bool space = at > split && is_word_char(type[at - 1]) && name[0] != '\0';
    size_t n = (at - split) + space + strlen(name) + (len - at) + 1;
    out->specifiers = strndup(type, spec_end);
    out->declarator = malloc(n);
    if (out->specifiers == NULL || out->declarator == NULL) {
        probe_declaration_free(out);
        return false;
    }
    memcpy(out->declarator, type + split, at - split);
    strcpy(out->declarator + (at - split), space ? " " : "");
    strcat(out->declarator, name);
    strcat(out->declarator, type + at);
    return true;
}

void probe_declaration_free(struct declaration *d)
{
    free(d->specifiers);
    free(d->declarator);
    d->specifiers = d->declarator = NULL;
}
