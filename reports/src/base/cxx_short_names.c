/* C++ names made short enough to read in a table, as heaptrack's and pprof's views shorten them:
 * std::string for the basic_string it stands for, template arguments a type has by default
 * (allocators, char_traits, less, hash, equal_to, default_delete) left out, and an argument list
 * still longer than SHORT_ARGUMENTS characters written <...>. Short lists stay (std::vector<int>,
 * std::map<std::string, std::vector<int>>): they say which container; pprof drops every list,
 * heaptrack every list's content. The full name stays in the JSON report, in --long-names, and
 * in the HTML page's titles. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "reports_base.h"

#define SHORT_ARGUMENTS 32

struct out {
    char *buf;
    size_t size, used;
};

static void put(struct out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n && o->used + 1 < o->size; i++)
        o->buf[o->used++] = s[i];
    o->buf[o->used] = '\0';
}

/* Names spelled out by the compiler that a reader knows by a shorter one. */
static const struct {
    const char *from, *to;
} aliases[] = {
    {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
     "std::string"},
    {"std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string"},
    {"std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >",
     "std::wstring"},
    {"std::__cxx11::", "std::"},
};

/* Template arguments a reader does not write: the defaults of the standard containers. */
static bool default_argument(const char *arg, size_t n)
{
    static const char *const defaults[] = {
        "std::allocator<", "std::char_traits<",    "std::less<",           "std::hash<",
        "std::equal_to<",  "std::default_delete<", "std::__new_allocator<"};
    for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
        if (n >= strlen(defaults[i]) && strncmp(arg, defaults[i], strlen(defaults[i])) == 0)
            return true;
    return false;
}

/* Whether the '<' or '>' at name[i] belongs to an operator's name (operator<, operator<<,
 * operator<=>, operator->, operator>>=), not to a template argument list. */
static bool operator_bracket(const char *name, size_t i)
{
    size_t k = i;
    while (k > 0 && strchr("<>=-", name[k - 1]) != NULL)
        k--;
    return k >= 8 && strncmp(name + k - 8, "operator", 8) == 0;
}

/* Whether the '<' at name[i] opens template arguments: it follows a name (a Rust path such as
 * "<alloc::vec::Vec<T> as Drop>::drop" opens with one that does not). */
static bool opens_arguments(const char *name, size_t i)
{
    return i > 0 && (isalnum((unsigned char)name[i - 1]) || name[i - 1] == '_');
}

/* The index just past the '>' closing the list opened at name[open], or SIZE_MAX when none
 * does. */
static size_t closing(const char *name, size_t len, size_t open)
{
    int depth = 0;
    for (size_t i = open; i < len; i++) {
        if (name[i] == '<' && !operator_bracket(name, i))
            depth++;
        else if (name[i] == '>' && !operator_bracket(name, i) && --depth == 0)
            return i + 1;
    }
    return SIZE_MAX;
}

static void shorten_into(const char *name, size_t len, struct out *o);

/* A template argument list (its content, between the brackets), shortened: each argument
 * shortened, defaults dropped but for the first, the whole <...> when still long. */
static void shorten_arguments(const char *args, size_t len, struct out *o)
{
    char list[4096];
    struct out inner = {list, sizeof list, 0};
    list[0] = '\0';
    size_t start = 0, count = 0;
    int depth = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? args[i] : ',';
        if ((c == '<' || c == '(') && !(c == '<' && operator_bracket(args, i)))
            depth++;
        else if ((c == '>' || c == ')') && !(c == '>' && operator_bracket(args, i)))
            depth--;
        if (c != ',' || depth > 0)
            continue;
        while (start < i && args[start] == ' ')
            start++;
        if (count == 0 || !default_argument(args + start, i - start)) {
            if (count > 0)
                put(&inner, ", ", 2);
            shorten_into(args + start, i - start, &inner);
        }
        count++;
        start = i + 1;
    }
    while (inner.used > 0 && list[inner.used - 1] == ' ') /* "vector<int> >" -> ">>" */
        list[--inner.used] = '\0';
    put(o, "<", 1);
    if (inner.used > SHORT_ARGUMENTS)
        put(o, "...", 3);
    else
        put(o, list, inner.used);
    put(o, ">", 1);
}

static void shorten_into(const char *name, size_t len, struct out *o)
{
    size_t i = 0;
    while (i < len) {
        bool aliased = false;
        for (size_t a = 0; a < sizeof aliases / sizeof *aliases && !aliased; a++) {
            size_t n = strlen(aliases[a].from);
            if (n <= len - i && strncmp(name + i, aliases[a].from, n) == 0) {
                put(o, aliases[a].to, strlen(aliases[a].to));
                i += n;
                aliased = true;
            }
        }
        if (aliased)
            continue;
        if (name[i] != '<' || operator_bracket(name, i) || !opens_arguments(name, i)) {
            put(o, name + i, 1);
            i++;
            continue;
        }
        size_t end = closing(name, len, i);
        if (end == SIZE_MAX) { /* unbalanced: keep the rest as it is */
            put(o, name + i, len - i);
            return;
        }
        shorten_arguments(name + i + 1, end - i - 2, o);
        i = end;
    }
}

const char *report_short_name(const char *name, char *out, size_t size)
{
    struct out o = {out, size, 0};
    if (size == 0)
        return out;
    out[0] = '\0';
    if (name != NULL)
        shorten_into(name, strlen(name), &o);
    return out;
}
