/* The parser behind cxx_names.c: a C++ type-id as producers and users write it, into the
 * demangler's component tree (libiberty's demangle.h), which its printer spells as gdb does. */
#ifndef PROBE_CXX_PARSE_H
#define PROBE_CXX_PARSE_H

#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stddef.h>

/* Components and the text of names built while parsing (digits, "&ns::gv") live in the parse:
 * components in one array sized from the input, text in blocks. */
struct cxx_text_block;

struct cxx_parse {
    const char *s;
    size_t pos, len;
    struct demangle_component *nodes;
    size_t used, capacity;
    struct cxx_text_block *blocks;
    int depth;   /* of nested parsing, bounded */
    bool failed; /* the input is no type-id this parser reads, or out of memory */
};

/* Parses the whole of s (len bytes) as a type-id: the tree, or NULL when it does not parse. The
 * tree lives until probe_cxx_parse_end. */
struct demangle_component *probe_cxx_parse_type(struct cxx_parse *p, const char *s, size_t len);

void probe_cxx_parse_end(struct cxx_parse *p);

/* A tree printed as gdb prints names (the demangler's printer, DMGL_PARAMS | DMGL_ANSI):
 * malloc'd, its length in *len; NULL when out of memory. */
char *probe_cxx_print(struct demangle_component *tree, size_t *len);

#endif
