/* A recursive-descent parser for C++ type-ids as DWARF producers and users spell them, into the
 * demangler's component tree, as gdb's cp-name-parser.y does for gdb's own canonical names:
 * specifiers in any order ("long unsigned int", "char const", "const char"), declarators
 * ("int (*)(int, ...)", "int (&)[3]", "int (M::*)() const", "char const* const*"), qualified and
 * template names, template arguments that are literals ("500UL", "-3", "'a'", "(E)0", "true",
 * "&ns::gv"), and the names producers give what has none ("(anonymous namespace)", "{anonymous}",
 * "<lambda(int)>", "(lambda at f.cc:3:4)"), kept as they are. A template argument that is an
 * expression is kept as its text. */
#include "cxx_parse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 48

typedef struct demangle_component node;

struct cxx_text_block {
    struct cxx_text_block *next;
    size_t used, size;
    char text[];
};

/* ---- tokens ---------------------------------------------------------------------------- */

enum kind { T_END, T_IDENT, T_NUMBER, T_CHAR, T_SPECIAL, T_PUNCT };

struct token {
    enum kind kind;
    size_t at, len;   /* in the input */
    const char *text; /* what the token stands for: the input, or a special's canonical name */
    size_t text_len;
};

static bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

static bool is_ident_char(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

/* The length up to and including the bracket that closes s[0] (open), nested ones counted; 0
 * when it is never closed. */
static size_t bracketed(const char *s, size_t len, char open, char close)
{
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == open)
            depth++;
        else if (s[i] == close && --depth == 0)
            return i + 1;
    }
    return 0;
}

/* Names producers give what has no name, each one token: "(anonymous namespace)" (gcc writes
 * "{anonymous}" inside template arguments), clang's "(lambda at FILE:L:C)" and "(unnamed struct
 * at ...)", gcc's "<lambda(int)>" and "<unnamed struct>", the demangler's "{lambda(int)#1}". */
static size_t special_length(const char *s, size_t len, const char **text, size_t *text_len)
{
    static const char anonymous[] = "(anonymous namespace)";
    *text = s;
    if (starts(s, len, anonymous) || starts(s, len, "{anonymous}")) {
        *text = anonymous;
        *text_len = sizeof anonymous - 1;
        return s[0] == '(' ? sizeof anonymous - 1 : strlen("{anonymous}");
    }
    size_t n = 0;
    if (starts(s, len, "(lambda at ") || starts(s, len, "(unnamed ") ||
        starts(s, len, "(anonymous "))
        n = bracketed(s, len, '(', ')');
    else if (starts(s, len, "<lambda(") || starts(s, len, "<unnamed ") ||
             starts(s, len, "<anonymous"))
        n = bracketed(s, len, '<', '>');
    else if (starts(s, len, "{lambda(") || starts(s, len, "{unnamed type#") ||
             starts(s, len, "{default arg#"))
        n = bracketed(s, len, '{', '}');
    *text_len = n;
    return n;
}

/* The length of a character literal starting at its quote, escapes included; 0 if unclosed. */
static size_t quoted_length(const char *s, size_t len)
{
    for (size_t i = 1; i < len; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '\'')
            return i + 1;
    }
    return 0;
}

static bool char_prefix(const char *s, size_t n)
{
    return (n == 1 && (s[0] == 'L' || s[0] == 'u' || s[0] == 'U')) ||
           (n == 2 && s[0] == 'u' && s[1] == '8');
}

static struct token lex(const struct cxx_parse *p)
{
    size_t i = p->pos;
    while (i < p->len && (p->s[i] == ' ' || p->s[i] == '\t'))
        i++;
    const char *c = p->s + i;
    size_t left = p->len - i, n = 1;
    struct token t = {T_END, i, 0, c, 0};
    if (left == 0)
        return t;
    if ((n = special_length(c, left, &t.text, &t.text_len)) > 0) {
        t.kind = T_SPECIAL;
    } else if (is_ident_start(*c)) {
        for (n = 1; n < left && is_ident_char(c[n]);)
            n++;
        size_t q =
            n < left && c[n] == '\'' && char_prefix(c, n) ? quoted_length(c + n, left - n) : 0;
        t.kind = q ? T_CHAR : T_IDENT;
        n += q;
    } else if (*c >= '0' && *c <= '9') {
        for (n = 1; n < left && (is_ident_char(c[n]) || c[n] == '.');)
            n++;
        t.kind = T_NUMBER;
    } else if (*c == '\'' && (n = quoted_length(c, left)) > 0) {
        t.kind = T_CHAR;
    } else {
        t.kind = T_PUNCT;
        n = starts(c, left, "...") ? 3 : starts(c, left, "::") || starts(c, left, "&&") ? 2 : 1;
    }
    t.len = n;
    if (t.kind != T_SPECIAL)
        t.text_len = n;
    return t;
}

static bool is_punct(struct token t, const char *s)
{
    return t.kind == T_PUNCT && t.len == strlen(s) && memcmp(t.text, s, t.len) == 0;
}

static bool is_word(struct token t, const char *w)
{
    return t.kind == T_IDENT && t.len == strlen(w) && memcmp(t.text, w, t.len) == 0;
}

static void take(struct cxx_parse *p, struct token t)
{
    p->pos = t.at + t.len;
}

static bool accept(struct cxx_parse *p, const char *punct)
{
    struct token t = lex(p);
    if (!is_punct(t, punct))
        return false;
    take(p, t);
    return true;
}

/* ---- components and text --------------------------------------------------------------- */

static node *make(struct cxx_parse *p, enum demangle_component_type type)
{
    if (p->used == p->capacity) {
        p->failed = true;
        return NULL;
    }
    node *n = &p->nodes[p->used++];
    memset(n, 0, sizeof *n);
    n->type = type;
    return n;
}

static node *comp(struct cxx_parse *p, enum demangle_component_type type, node *left, node *right)
{
    node *n = make(p, type);
    if (n != NULL) {
        n->u.s_binary.left = left;
        n->u.s_binary.right = right;
    }
    return n;
}

static node *name_node(struct cxx_parse *p, const char *s, size_t len)
{
    node *n = make(p, DEMANGLE_COMPONENT_NAME);
    if (n != NULL) {
        n->u.s_name.s = s;
        n->u.s_name.len = (int)len;
    }
    return n;
}

/* A fundamental type by the demangler's name ("unsigned long"), or a name it does not know. */
static node *builtin(struct cxx_parse *p, const char *name)
{
    node *n = make(p, DEMANGLE_COMPONENT_BUILTIN_TYPE);
    if (n == NULL || cplus_demangle_fill_builtin_type(n, name))
        return n;
    return name_node(p, name, strlen(name));
}

static char *text_alloc(struct cxx_parse *p, size_t n)
{
    struct cxx_text_block *b = p->blocks;
    if (b == NULL || b->size - b->used < n) {
        size_t size = n > 4096 ? n : 4096;
        b = malloc(sizeof *b + size);
        if (b == NULL) {
            p->failed = true;
            return NULL;
        }
        *b = (struct cxx_text_block){p->blocks, 0, size};
        p->blocks = b;
    }
    char *s = b->text + b->used;
    b->used += n;
    return s;
}

static node *name_copy(struct cxx_parse *p, const char *s, size_t len)
{
    char *copy = text_alloc(p, len);
    if (copy == NULL)
        return NULL;
    memcpy(copy, s, len);
    return name_node(p, copy, len);
}

struct printed {
    char *buf;
    size_t len, cap;
    bool failed;
};

static void print_into(const char *s, size_t n, void *opaque)
{
    struct printed *out = opaque;
    if (out->failed)
        return;
    if (out->len + n + 1 > out->cap) {
        size_t cap = 2 * (out->len + n + 1) + 64;
        char *grown = realloc(out->buf, cap);
        if (grown == NULL) {
            out->failed = true;
            return;
        }
        out->buf = grown;
        out->cap = cap;
    }
    memcpy(out->buf + out->len, s, n);
    out->len += n;
    out->buf[out->len] = '\0';
}

char *probe_cxx_print(struct demangle_component *tree, size_t *len)
{
    struct printed out = {NULL, 0, 0, false};
    if (!cplus_demangle_print_callback(DMGL_PARAMS | DMGL_ANSI, tree, print_into, &out) ||
        out.failed) {
        free(out.buf);
        return NULL;
    }
    *len = out.len;
    return out.buf;
}

/* "&" and the name printed: an address as a template argument ("&ns::gv", "&M::mm"). */
static node *address_of(struct cxx_parse *p, node *name)
{
    size_t len;
    char *printed = name ? probe_cxx_print(name, &len) : NULL;
    char *text = printed ? text_alloc(p, len + 1) : NULL;
    if (text == NULL) {
        free(printed);
        p->failed = true;
        return NULL;
    }
    text[0] = '&';
    memcpy(text + 1, printed, len);
    free(printed);
    return name_node(p, text, len + 1);
}

/* ---- names --------------------------------------------------------------------------------- */

static node *parse_type(struct cxx_parse *p);
static node *parse_name(struct cxx_parse *p);
static node *parse_params(struct cxx_parse *p);

static const char *const specifier_words[] = {
    "const",    "volatile", "restrict", "__restrict", "__restrict__", "unsigned", "signed",
    "short",    "long",     "int",      "char",       "bool",         "float",    "double",
    "void",     "wchar_t",  "char8_t",  "char16_t",   "char32_t",     "__int128", "__float128",
    "_Float16", "_Float32", "_Float64", "_Float128",  "auto",         "struct",   "class",
    "union",    "enum",     "typename", "decltype",   "operator",     NULL};

static bool is_specifier(struct token t)
{
    for (size_t i = 0; specifier_words[i] != NULL; i++)
        if (is_word(t, specifier_words[i]))
            return true;
    return false;
}

static node *parse_template_args(struct cxx_parse *p);

/* "operator T" after the keyword: a conversion function's name (g++ names an instance of a
 * conversion template "operator testing::Action<void(int)><void, int>"). */
static node *parse_specifiers(struct cxx_parse *p);
static node *parse_pointers(struct cxx_parse *p, node *type);

static node *conversion_name(struct cxx_parse *p)
{
    /* (a conversion-type-id: specifiers and pointers, no parameter list: "operator int()") */
    node *type = parse_specifiers(p);
    type = type ? parse_pointers(p, type) : NULL;
    return type ? comp(p, DEMANGLE_COMPONENT_CONVERSION, type, NULL) : NULL;
}

/* An identifier with its template arguments, a conversion function's name, or a special name. */
static node *parse_component(struct cxx_parse *p)
{
    struct token t = lex(p);
    if (t.kind == T_SPECIAL) {
        take(p, t);
        return name_node(p, t.text, t.text_len);
    }
    if (is_word(t, "operator")) {
        take(p, t);
        struct token next = lex(p);
        node *n = next.kind == T_IDENT || next.kind == T_SPECIAL ? conversion_name(p) : NULL;
        if (n == NULL) { /* operator(), operator<...: kept as they are */
            p->failed = true;
            return NULL;
        }
        if (!accept(p, "<"))
            return n;
        node *args = parse_template_args(p);
        return args ? comp(p, DEMANGLE_COMPONENT_TEMPLATE, n, args) : NULL;
    }
    if (t.kind != T_IDENT || is_specifier(t)) {
        p->failed = true;
        return NULL;
    }
    take(p, t);
    node *n = name_node(p, t.text, t.len);
    if (n == NULL || !accept(p, "<"))
        return n;
    node *args = parse_template_args(p);
    return args ? comp(p, DEMANGLE_COMPONENT_TEMPLATE, n, args) : NULL;
}

/* const, volatile, restrict, & and && after a parameter list, as bits 1, 2, 4, 8 and 16. */
static int function_qualifiers(struct cxx_parse *p)
{
    int bits = 0;
    for (;;) {
        struct token t = lex(p);
        int bit = is_word(t, "const")      ? 1
                  : is_word(t, "volatile") ? 2
                  : is_punct(t, "&&")      ? 16
                  : is_punct(t, "&")       ? 8
                                           : 0;
        if (bit == 0)
            return bits;
        take(p, t);
        bits |= bit;
    }
}

static node *qualify_this(struct cxx_parse *p, node *n, int bits)
{
    if (bits & 1)
        n = comp(p, DEMANGLE_COMPONENT_CONST_THIS, n, NULL);
    if (bits & 2)
        n = comp(p, DEMANGLE_COMPONENT_VOLATILE_THIS, n, NULL);
    if (bits & 8)
        n = comp(p, DEMANGLE_COMPONENT_REFERENCE_THIS, n, NULL);
    if (bits & 16)
        n = comp(p, DEMANGLE_COMPONENT_RVALUE_REFERENCE_THIS, n, NULL);
    return n;
}

/* After a name: "(params) [const]::" makes it the function a local entity belongs to
 * ("f(int)::L", "K::m(int) const::ML", gcc's "lams(int)::<lambda(int)>"). NULL (and the
 * position kept) when what follows is not that. */
static node *function_scope(struct cxx_parse *p, node *function)
{
    size_t pos = p->pos, used = p->used;
    if (!accept(p, "("))
        return NULL;
    node *params = parse_params(p);
    int bits = params ? function_qualifiers(p) : 0;
    if (params == NULL || !accept(p, "::")) {
        p->pos = pos;
        p->used = used;
        p->failed = false;
        return NULL;
    }
    node *type = comp(p, DEMANGLE_COMPONENT_FUNCTION_TYPE, NULL, params);
    return comp(p, DEMANGLE_COMPONENT_TYPED_NAME, qualify_this(p, function, bits), type);
}

/* A qualified name: [::] component (:: component)*, a function scope anywhere before the last. */
static node *parse_name(struct cxx_parse *p)
{
    if (++p->depth > MAX_DEPTH) {
        p->failed = true;
        return NULL;
    }
    accept(p, "::");
    node *result = NULL;
    for (;;) {
        node *component = parse_component(p);
        if (component == NULL)
            break;
        result = result ? comp(p, DEMANGLE_COMPONENT_QUAL_NAME, result, component) : component;
        node *function = function_scope(p, result);
        if (function != NULL) {
            node *rest = parse_name(p);
            result = rest ? comp(p, DEMANGLE_COMPONENT_LOCAL_NAME, function, rest) : NULL;
            break;
        }
        size_t pos = p->pos;
        struct token next;
        if (!accept(p, "::") || ((next = lex(p)).kind != T_IDENT && next.kind != T_SPECIAL)) {
            p->pos = pos;
            break;
        }
    }
    p->depth--;
    return p->failed ? NULL : result;
}

/* ---- literals ------------------------------------------------------------------------------ */

/* The value of a character literal ("'a'", "'\\n'", "'\\x05'", "'\\001'"); false when it is
 * not one character. */
static bool char_value(const char *s, size_t len, unsigned long *value)
{
    const char *q = memchr(s, '\'', len);
    if (q == NULL || len - (size_t)(q - s) < 3)
        return false;
    const char *c = q + 1, *end = s + len - 1;
    if (*c != '\\') {
        *value = (unsigned char)*c;
        return c + 1 == end;
    }
    static const char escapes[] = "n\nt\tr\r0\0\\\\''\"\"a\ab\bf\fv\v";
    char *stop;
    if (c[1] == 'x')
        *value = strtoul(c + 2, &stop, 16);
    else if (c[1] >= '0' && c[1] <= '7')
        *value = strtoul(c + 1, &stop, 8);
    else {
        const char *e = memchr(escapes, c[1], sizeof escapes - 1);
        if (e == NULL || (e - escapes) % 2 != 0)
            return false;
        *value = (unsigned char)e[1];
        stop = (char *)c + 2;
    }
    return stop == end;
}

static node *number_text(struct cxx_parse *p, unsigned long long value)
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%llu", value);
    return name_copy(p, digits, (size_t)n);
}

/* A character literal of type type (NULL: from its prefix): plain char printable as itself
 * ("(char)'a'", as gdb prints both compilers' names), others by value ("(wchar_t)65"). */
static node *char_literal(struct cxx_parse *p, struct token t, node *type)
{
    unsigned long value;
    if (!char_value(t.text, t.len, &value)) {
        p->failed = true;
        return NULL;
    }
    if (type == NULL)
        type = builtin(p, t.text[0] == 'L'                                    ? "wchar_t"
                          : t.text[0] == 'U'                                  ? "char32_t"
                          : t.len > 1 && t.text[0] == 'u' && t.text[1] == '8' ? "char8_t"
                          : t.text[0] == 'u'                                  ? "char16_t"
                                                                              : "char");
    struct demangle_component plain_char;
    bool plain = type && type->type == DEMANGLE_COMPONENT_BUILTIN_TYPE &&
                 cplus_demangle_fill_builtin_type(&plain_char, "char") &&
                 type->u.s_builtin.type == plain_char.u.s_builtin.type;
    node *v = plain && value >= 0x20 && value < 0x7f && value != '\\' && value != '\''
                  ? name_copy(p, (char[]){'\'', (char)value, '\''}, 3)
                  : number_text(p, value);
    return comp(p, DEMANGLE_COMPONENT_LITERAL, type, v);
}

/* An integer literal: digits (decimal or 0x) and a suffix that names its type, as the
 * demangler prints it back ("500ul", "3u", "-5l"). NULL, not failed, when it is no integer. */
static node *integer_literal(struct cxx_parse *p, struct token t, bool negative, node *type)
{
    char digits[64];
    size_t n = 0, i = 0;
    unsigned long long value = 0;
    bool hex = t.len > 2 && t.text[0] == '0' && (t.text[1] == 'x' || t.text[1] == 'X');
    if (hex) {
        char *end;
        value = strtoull(t.text + 2, &end, 16);
        i = (size_t)(end - t.text);
        n = (size_t)snprintf(digits, sizeof digits, "%llu", value);
    } else {
        while (i < t.len && t.text[i] >= '0' && t.text[i] <= '9' && n < sizeof digits - 1)
            digits[n++] = t.text[i++];
    }
    static const char *const suffixes[][2] = {{"", "int"},
                                              {"u", "unsigned int"},
                                              {"l", "long"},
                                              {"ul", "unsigned long"},
                                              {"lu", "unsigned long"},
                                              {"ll", "long long"},
                                              {"ull", "unsigned long long"},
                                              {"llu", "unsigned long long"}};
    char suffix[4] = {0};
    for (size_t k = 0; i < t.len; i++, k++) {
        if (k == 3)
            return NULL;
        suffix[k] = (char)(t.text[i] | 0x20);
    }
    const char *named = NULL;
    for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0] && named == NULL; k++)
        if (strcmp(suffix, suffixes[k][0]) == 0)
            named = suffixes[k][1];
    if (named == NULL || n == 0)
        return NULL;
    if (type == NULL)
        type = builtin(p, named);
    node *v = name_copy(p, digits, n);
    return comp(p, negative ? DEMANGLE_COMPONENT_LITERAL_NEG : DEMANGLE_COMPONENT_LITERAL, type, v);
}

/* A number or character after an optional "-", of the given type (NULL: its own). */
static node *typed_value(struct cxx_parse *p, node *type)
{
    struct token t = lex(p);
    bool negative = is_punct(t, "-");
    if (negative) {
        take(p, t);
        t = lex(p);
    }
    if (t.kind == T_NUMBER) {
        take(p, t);
        return integer_literal(p, t, negative, type);
    }
    if (t.kind == T_CHAR && !negative) {
        take(p, t);
        return char_literal(p, t, type);
    }
    return NULL;
}

/* "(type)value" (clang's "(short)4", gcc's "(E)0") or gcc's "(& ns::gv)". */
static node *parenthesized_literal(struct cxx_parse *p)
{
    if (!accept(p, "("))
        return NULL;
    if (accept(p, "&")) {
        node *name = parse_name(p);
        return name && accept(p, ")") ? address_of(p, name) : NULL;
    }
    node *type = parse_type(p);
    return type && accept(p, ")") ? typed_value(p, type) : NULL;
}

/* A template argument that is a value: numbers, characters, true and false, nullptr, addresses.
 * NULL with the position kept when it is not one. */
static node *parse_literal(struct cxx_parse *p)
{
    size_t pos = p->pos, used = p->used;
    struct token t = lex(p);
    node *n = NULL;
    if (t.kind == T_NUMBER || t.kind == T_CHAR || is_punct(t, "-")) {
        n = typed_value(p, NULL);
    } else if (is_word(t, "true") || is_word(t, "false")) {
        take(p, t);
        n = comp(p, DEMANGLE_COMPONENT_LITERAL, builtin(p, "bool"),
                 name_node(p, t.text[0] == 't' ? "1" : "0", 1));
    } else if (is_word(t, "nullptr")) {
        take(p, t);
        n = name_node(p, "nullptr", 7);
    } else if (is_punct(t, "&")) {
        take(p, t);
        n = address_of(p, parse_name(p));
    } else if (is_punct(t, "(")) {
        n = parenthesized_literal(p);
    }
    if (n == NULL || p->failed) {
        p->pos = pos;
        p->used = used;
        p->failed = false;
        return NULL;
    }
    return n;
}

/* ---- template arguments -------------------------------------------------------------------- */

/* A template argument kept as its text (an expression): up to the ',' or '>' that ends it. */
static node *raw_argument(struct cxx_parse *p)
{
    int round = 0, angle = 0;
    size_t i = p->pos;
    for (; i < p->len; i++) {
        char c = p->s[i];
        if (c == '(' || c == '[' || c == '{')
            round++;
        else if (c == ')' || c == ']' || c == '}')
            round--;
        else if (round == 0 && c == '<')
            angle++;
        else if (round == 0 && angle == 0 && (c == ',' || c == '>'))
            break;
        else if (round == 0 && c == '>')
            angle--;
    }
    size_t start = p->pos, end = i;
    while (start < end && p->s[start] == ' ')
        start++;
    while (end > start && p->s[end - 1] == ' ')
        end--;
    if (i == p->len || end == start) {
        p->failed = true;
        return NULL;
    }
    p->pos = i;
    return name_node(p, p->s + start, end - start);
}

static bool ends_argument(struct cxx_parse *p)
{
    struct token t = lex(p);
    return is_punct(t, ",") || is_punct(t, ">");
}

/* A value, else a type, else the argument's text. */
static node *parse_template_arg(struct cxx_parse *p)
{
    size_t pos = p->pos, used = p->used;
    node *n = parse_literal(p);
    if (n != NULL && ends_argument(p))
        return n;
    p->pos = pos;
    p->used = used;
    n = parse_type(p);
    if (n != NULL && ends_argument(p))
        return n;
    p->pos = pos;
    p->used = used;
    p->failed = false;
    return raw_argument(p);
}

/* After '<': the arguments up to the matching '>'. An empty one is g++'s spelling of an empty
 * pack ("RegisterTest<, F>"), which the demangler spells so too (and drops at the end). */
static node *parse_template_args(struct cxx_parse *p)
{
    node *head = NULL, **tail = &head;
    if (accept(p, ">"))
        return comp(p, DEMANGLE_COMPONENT_TEMPLATE_ARGLIST, NULL, NULL);
    do {
        struct token t = lex(p);
        node *arg = is_punct(t, ",") || is_punct(t, ">")
                        ? comp(p, DEMANGLE_COMPONENT_TEMPLATE_ARGLIST, NULL, NULL)
                        : parse_template_arg(p);
        node *link = arg ? comp(p, DEMANGLE_COMPONENT_TEMPLATE_ARGLIST, arg, NULL) : NULL;
        if (link == NULL)
            return NULL;
        *tail = link;
        tail = &link->u.s_binary.right;
    } while (accept(p, ","));
    if (!accept(p, ">")) {
        p->failed = true;
        return NULL;
    }
    return head;
}

/* ---- types --------------------------------------------------------------------------------- */

/* The fundamental type words of a declaration, in any order. */
struct words {
    int longs, shorts;
    bool is_unsigned, is_signed, is_char, is_int;
    const char *single; /* bool, double, void, wchar_t, __int128, decltype(nullptr)... */
    int cv;             /* 1 const, 2 volatile, 4 restrict */
};

static bool counted_word(struct words *w, struct token t)
{
    if (is_word(t, "unsigned"))
        w->is_unsigned = true;
    else if (is_word(t, "signed"))
        w->is_signed = true;
    else if (is_word(t, "short"))
        w->shorts++;
    else if (is_word(t, "long"))
        w->longs++;
    else if (is_word(t, "int"))
        w->is_int = true;
    else if (is_word(t, "char"))
        w->is_char = true;
    else
        return false;
    return true;
}

static int cv_bit(struct token t)
{
    if (is_word(t, "const"))
        return 1;
    if (is_word(t, "volatile") || is_word(t, "__volatile__"))
        return 2;
    if (is_word(t, "restrict") || is_word(t, "__restrict") || is_word(t, "__restrict__"))
        return 4;
    return 0;
}

static bool has_words(const struct words *w)
{
    return w->longs || w->shorts || w->is_unsigned || w->is_signed || w->is_char || w->is_int ||
           w->single;
}

/* The demangler's name of the fundamental type the words make. */
static const char *fundamental_name(const struct words *w)
{
    if (w->single != NULL) {
        if (strcmp(w->single, "double") == 0 && w->longs == 1)
            return "long double";
        if (strcmp(w->single, "__int128") == 0 && w->is_unsigned)
            return "unsigned __int128";
        return w->single;
    }
    if (w->is_char)
        return w->is_unsigned ? "unsigned char" : w->is_signed ? "signed char" : "char";
    if (w->shorts)
        return w->is_unsigned ? "unsigned short" : "short";
    if (w->longs >= 2)
        return w->is_unsigned ? "unsigned long long" : "long long";
    if (w->longs == 1)
        return w->is_unsigned ? "unsigned long" : "long";
    return w->is_unsigned ? "unsigned int" : "int";
}

static const char *const single_words[] = {"bool",     "float",      "double",   "void",
                                           "wchar_t",  "char8_t",    "char16_t", "char32_t",
                                           "__int128", "__float128", "_Float16", "_Float32",
                                           "_Float64", "_Float128",  "auto",     NULL};

static const char *single_word(struct token t)
{
    for (size_t i = 0; single_words[i] != NULL; i++)
        if (is_word(t, single_words[i]))
            return single_words[i];
    return NULL;
}

/* "decltype(...)" after the keyword: decltype(nullptr) is a fundamental type; any other is kept
 * as its text. */
static node *parse_decltype(struct cxx_parse *p, struct words *w, size_t start)
{
    struct token open = lex(p);
    size_t n = is_punct(open, "(") ? bracketed(p->s + open.at, p->len - open.at, '(', ')') : 0;
    if (n == 0) {
        p->failed = true;
        return NULL;
    }
    p->pos = open.at + n;
    if (n == strlen("(nullptr)") && memcmp(p->s + open.at, "(nullptr)", n) == 0) {
        w->single = "decltype(nullptr)";
        return NULL;
    }
    return name_node(p, p->s + start, p->pos - start);
}

static node *wrap_cv(struct cxx_parse *p, node *n, int cv)
{
    if (cv & 1)
        n = comp(p, DEMANGLE_COMPONENT_CONST, n, NULL);
    if (cv & 2)
        n = comp(p, DEMANGLE_COMPONENT_VOLATILE, n, NULL);
    if (cv & 4)
        n = comp(p, DEMANGLE_COMPONENT_RESTRICT, n, NULL);
    return n;
}

/* The specifiers of a type-id: cv, fundamental words, elaborated and qualified names. NULL
 * (not failed) when there are none. */
static node *parse_specifiers(struct cxx_parse *p)
{
    struct words w = {0};
    node *named = NULL;
    for (;;) {
        struct token t = lex(p);
        int cv = cv_bit(t);
        const char *single = single_word(t);
        bool have = named != NULL || has_words(&w);
        if (cv) {
            w.cv |= cv;
        } else if (is_word(t, "struct") || is_word(t, "class") || is_word(t, "union") ||
                   is_word(t, "enum") || is_word(t, "typename")) {
        } else if (!named && (!w.single || !strcmp(w.single, "__int128")) && counted_word(&w, t)) {
        } else if (single && !named && !w.single) {
            w.single = single;
        } else if (is_word(t, "decltype") && !have) {
            take(p, t);
            named = parse_decltype(p, &w, t.at);
            if (p->failed)
                return NULL;
            continue;
        } else if (!have && (t.kind == T_IDENT || t.kind == T_SPECIAL || is_punct(t, "::"))) {
            if ((named = parse_name(p)) == NULL)
                return NULL;
            continue;
        } else {
            break;
        }
        take(p, t);
    }
    if (named == NULL && !has_words(&w))
        return NULL;
    node *base = named ? named : builtin(p, fundamental_name(&w));
    return wrap_cv(p, base, w.cv);
}

/* cv-qualifiers after a '*' or a member pointer's "::*". */
static node *pointer_cv(struct cxx_parse *p, node *n)
{
    int cv = 0, bit;
    struct token t;
    while ((bit = cv_bit(t = lex(p))) != 0) {
        cv |= bit;
        take(p, t);
    }
    return wrap_cv(p, n, cv);
}

/* "Class::*" at the position: the class, consumed; else NULL with the position kept. */
static node *member_pointer_class(struct cxx_parse *p)
{
    size_t pos = p->pos, used = p->used;
    struct token t = lex(p);
    if (t.kind != T_IDENT && t.kind != T_SPECIAL)
        return NULL;
    node *cls = parse_name(p);
    if (cls != NULL && accept(p, "::") && accept(p, "*"))
        return cls;
    p->pos = pos;
    p->used = used;
    p->failed = false;
    return NULL;
}

/* Pointer, reference and member pointer operators, innermost first: "* const *", "&", "M::*". */
static node *parse_pointers(struct cxx_parse *p, node *type)
{
    for (;;) {
        struct token t = lex(p);
        node *cls;
        if (is_punct(t, "*")) {
            take(p, t);
            type = pointer_cv(p, comp(p, DEMANGLE_COMPONENT_POINTER, type, NULL));
        } else if (is_punct(t, "&&") || is_punct(t, "&")) {
            take(p, t);
            type = comp(
                p, t.len == 2 ? DEMANGLE_COMPONENT_RVALUE_REFERENCE : DEMANGLE_COMPONENT_REFERENCE,
                type, NULL);
        } else if ((cls = member_pointer_class(p)) != NULL) {
            type = pointer_cv(p, comp(p, DEMANGLE_COMPONENT_PTRMEM_TYPE, cls, type));
        } else {
            return type;
        }
        if (type == NULL)
            return NULL;
    }
}

/* After '(': the parameter types up to ')', "(void)" as "()". */
static node *parse_params(struct cxx_parse *p)
{
    size_t pos = p->pos;
    if (accept(p, ")") || (is_word(lex(p), "void") && (take(p, lex(p)), accept(p, ")"))))
        return comp(p, DEMANGLE_COMPONENT_ARGLIST, NULL, NULL);
    p->pos = pos;
    node *head = NULL, **tail = &head;
    do {
        node *arg = accept(p, "...") ? builtin(p, "...") : parse_type(p);
        node *link = arg ? comp(p, DEMANGLE_COMPONENT_ARGLIST, arg, NULL) : NULL;
        if (link == NULL) {
            p->failed = true;
            return NULL;
        }
        *tail = link;
        tail = &link->u.s_binary.right;
    } while (accept(p, ","));
    if (!accept(p, ")")) {
        p->failed = true;
        return NULL;
    }
    return head;
}

/* What follows a declarator: a parameter list with its qualifiers, or array bounds. */
static node *parse_suffixes(struct cxx_parse *p, node *type)
{
    if (accept(p, "(")) {
        node *params = parse_params(p);
        if (params == NULL)
            return NULL;
        node *fn = qualify_this(p, comp(p, DEMANGLE_COMPONENT_FUNCTION_TYPE, type, params),
                                function_qualifiers(p));
        struct token t = lex(p);
        if (is_word(t, "noexcept")) {
            take(p, t);
            fn = comp(p, DEMANGLE_COMPONENT_NOEXCEPT, fn, NULL);
        }
        return fn;
    }
    node *bounds[16];
    size_t n = 0;
    while (n < 16 && accept(p, "[")) {
        struct token t = lex(p);
        bounds[n] = NULL;
        if (t.kind == T_NUMBER) {
            take(p, t);
            bounds[n] = name_node(p, t.text, t.len);
        }
        n++;
        if (!accept(p, "]")) {
            p->failed = true;
            return NULL;
        }
    }
    while (n > 0 && type != NULL)
        type = comp(p, DEMANGLE_COMPONENT_ARRAY_TYPE, bounds[--n], type);
    return type;
}

/* Whether the '(' at the position opens a nested declarator ("(*)", "(&)", "(M::*)"), not a
 * parameter list. */
static bool opens_declarator(struct cxx_parse *p)
{
    size_t pos = p->pos, used = p->used;
    accept(p, "(");
    struct token t = lex(p);
    bool nested = is_punct(t, "*") || is_punct(t, "&") || is_punct(t, "&&") ||
                  member_pointer_class(p) != NULL;
    p->pos = pos;
    p->used = used;
    p->failed = false;
    return nested;
}

/* An abstract declarator around type: pointers, then either a nested declarator in parentheses
 * (which applies to what the suffixes after it make) or the suffixes. */
static node *parse_declarator(struct cxx_parse *p, node *type)
{
    type = parse_pointers(p, type);
    if (type == NULL || !is_punct(lex(p), "(") || !opens_declarator(p))
        return type ? parse_suffixes(p, type) : NULL;
    size_t inner = lex(p).at + 1;
    size_t n = bracketed(p->s + inner - 1, p->len - inner + 1, '(', ')');
    if (n == 0) {
        p->failed = true;
        return NULL;
    }
    size_t close = inner - 1 + n - 1;
    p->pos = close + 1;
    type = parse_suffixes(p, type);
    size_t after = p->pos;
    p->pos = inner;
    type = type ? parse_declarator(p, type) : NULL;
    if (type == NULL || lex(p).at != close) {
        p->failed = true;
        return NULL;
    }
    p->pos = after;
    return type;
}

static node *parse_type(struct cxx_parse *p)
{
    if (++p->depth > MAX_DEPTH) {
        p->failed = true;
        return NULL;
    }
    node *type = parse_specifiers(p);
    if (type != NULL)
        type = parse_declarator(p, type);
    p->depth--;
    return p->failed ? NULL : type;
}

struct demangle_component *probe_cxx_parse_type(struct cxx_parse *p, const char *s, size_t len)
{
    memset(p, 0, sizeof *p);
    p->s = s;
    p->len = len;
    p->capacity = 4 * len + 16;
    p->nodes = malloc(p->capacity * sizeof *p->nodes);
    if (p->nodes == NULL)
        return NULL;
    node *type = parse_type(p);
    if (type == NULL || p->failed || lex(p).kind != T_END)
        return NULL;
    return type;
}

void probe_cxx_parse_end(struct cxx_parse *p)
{
    while (p->blocks != NULL) {
        struct cxx_text_block *next = p->blocks->next;
        free(p->blocks);
        p->blocks = next;
    }
    free(p->nodes);
    p->nodes = NULL;
}
