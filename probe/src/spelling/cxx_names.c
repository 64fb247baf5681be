/* Canonical C++ names: parsed (cxx_parse.c) and printed by libiberty's demangler printer with the
 * options gdb uses, so that a name reads as gdb, c++filt and nm -C show it whoever produced it. */
#include "probe_spelling.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cxx_parse.h"

bool probe_cxx_plain_name(const char *name)
{
    static const char *const words[] = {"unsigned", "signed", "short", "long", NULL};
    for (size_t i = 0; words[i] != NULL; i++)
        if (strcmp(name, words[i]) == 0)
            return false;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == ':' || *c == '$'))
            return false;
    return true;
}

/* g++ names the x86-64 va_list record "typedef __va_list_tag __va_list_tag"; clang and the
 * ABI "__va_list_tag". */
static bool gcc_typedef_quirk(const char *name)
{
    static const char quirk[] = "typedef __va_list_tag __va_list_tag";
    return strcmp(name, quirk) == 0;
}

/* A spelling once parsed, by the text it was parsed from: most names come back in every unit
 * that instantiates the same template, and a look-up costs a fraction of a parse. */
struct canonical {
    uint64_t hash;
    char *name, *canonical;
};

static _Thread_local struct {
    struct canonical *slots;
    size_t capacity, count;
} cache;

static uint64_t hash_of(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
    return h;
}

static struct canonical *cache_slot(uint64_t hash, const char *name)
{
    size_t mask = cache.capacity - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        struct canonical *c = &cache.slots[i];
        if (c->name == NULL || (c->hash == hash && strcmp(c->name, name) == 0))
            return c;
    }
}

static bool cache_room(void)
{
    if (2 * (cache.count + 1) <= cache.capacity)
        return true;
    size_t capacity = cache.capacity ? 2 * cache.capacity : 1024;
    struct canonical *old = cache.slots, *slots = calloc(capacity, sizeof *slots);
    if (slots == NULL)
        return false;
    size_t old_capacity = cache.capacity;
    cache.slots = slots;
    cache.capacity = capacity;
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i].name != NULL)
            *cache_slot(old[i].hash, old[i].name) = old[i];
    free(old);
    return true;
}

void probe_cxx_names_reset(void)
{
    for (size_t i = 0; i < cache.capacity; i++) {
        free(cache.slots[i].name);
        free(cache.slots[i].canonical);
    }
    free(cache.slots);
    memset(&cache, 0, sizeof cache);
}

/* The parse and the print: a new string, a copy of name when it does not parse, NULL when out of
 * memory. */
static char *parsed(const char *name)
{
    struct cxx_parse p;
    size_t len;
    struct demangle_component *tree = probe_cxx_parse_type(&p, name, strlen(name));
    char *printed = tree ? probe_cxx_print(tree, &len) : NULL;
    bool out_of_memory = p.nodes == NULL;
    probe_cxx_parse_end(&p);
    if (printed != NULL)
        return printed;
    return out_of_memory ? NULL : strdup(name);
}

char *probe_cxx_canonical(const char *name)
{
    if (gcc_typedef_quirk(name))
        return strdup("__va_list_tag");
    if (probe_cxx_plain_name(name))
        return strdup(name);
    uint64_t hash = hash_of(name);
    if (!cache_room())
        return parsed(name);
    struct canonical *slot = cache_slot(hash, name);
    if (slot->name == NULL) {
        char *copy = strdup(name), *canonical = copy ? parsed(name) : NULL;
        if (canonical == NULL) {
            free(copy);
            return NULL;
        }
        *slot = (struct canonical){hash, copy, canonical};
        cache.count++;
    }
    return strdup(slot->canonical);
}

/* GCC's spellings of the fundamental types and gdb's, which are clang's and the demangler's. */
static const char *const fundamentals[][2] = {
    {"long unsigned int", "unsigned long"},
    {"long int", "long"},
    {"long long int", "long long"},
    {"long long unsigned int", "unsigned long long"},
    {"short int", "short"},
    {"short unsigned int", "unsigned short"},
    {"__int128 unsigned", "unsigned __int128"},
};

const char *probe_cxx_fundamental(const char *name)
{
    for (size_t i = 0; i < sizeof fundamentals / sizeof fundamentals[0]; i++)
        if (strcmp(name, fundamentals[i][0]) == 0)
            return fundamentals[i][1];
    return name;
}

size_t probe_cxx_template_args(const char *name, struct cxx_span *args, size_t max, size_t *open)
{
    size_t len = strlen(name);
    if (len < 2 || name[len - 1] != '>')
        return 0;
    int round = 0, angle = 0;
    size_t count = 0, start = 0;
    *open = 0;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool ends = false; /* an argument of the outermost list ends here */
        if (c == '(' || c == '[' || c == '{') {
            round++;
        } else if (c == ')' || c == ']' || c == '}') {
            round--;
        } else if (round == 0 && c == '<' && angle++ == 0) {
            *open = i;
            count = 0;
            start = i + 1;
        } else if (round == 0 && c == '>' && --angle == 0) {
            if (i != len - 1) /* "A<1>::B<2>" is B's list, met later */
                continue;
            ends = i > start;
        } else if (round == 0 && angle == 1 && c == ',') {
            ends = true;
        }
        if (!ends)
            continue;
        size_t a = start, b = i;
        while (a < b && name[a] == ' ')
            a++;
        while (b > a && name[b - 1] == ' ')
            b--;
        if (b > a && count < max) /* (an empty one is g++'s empty pack: none) */
            args[count] = (struct cxx_span){a, b - a};
        count += b > a;
        start = i + 1;
    }
    return angle == 0 && round == 0 ? count : 0;
}

const char *probe_cxx_next_component(const char *name)
{
    int depth = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '<' || *p == '(' || *p == '{')
            depth++;
        else if ((*p == '>' || *p == ')' || *p == '}') && depth > 0)
            depth--;
        else if (depth == 0 && p[0] == ':' && p[1] == ':')
            return p + 2;
    }
    return NULL;
}

const char *probe_cxx_last_component(const char *name)
{
    for (const char *next = name; next != NULL; next = probe_cxx_next_component(name))
        name = next;
    return name;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

/* Past an integer literal's suffix ("ul", "ll", "u"), when it ends a literal. */
static const char *past_suffix(const char *s)
{
    const char *t = s;
    while (*t == 'u' || *t == 'l')
        t++;
    return is_word_char(*t) ? s : t;
}

bool probe_cxx_names_equivalent(const char *a, const char *b)
{
    const char *start = a;
    bool number = false; /* what was just matched is a literal's digits, or them and a suffix */
    for (;;) {
        if (*a != *b && number) {
            a = past_suffix(a);
            b = past_suffix(b);
            number = false;
        }
        if (*a != *b)
            return false;
        if (*a == '\0')
            return true;
        if (is_digit(*a))
            number = number || a == start || !is_word_char(a[-1]);
        else if (!(number && (*a == 'u' || *a == 'l')))
            number = false;
        a++;
        b++;
    }
}
