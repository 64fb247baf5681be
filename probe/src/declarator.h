/* A member's declaration split the way pahole prints it: the type's specifiers in one column
 * ("const char", "void", "char *") and the declarator around the name in the next
 * ("(*strings)[32]", "(*cb)(int, void *)", "e[3]"). */
#ifndef PROBE_DECLARATOR_H
#define PROBE_DECLARATOR_H

#include <stdbool.h>
#include <stddef.h>

struct declaration {
    char *specifiers;
    char *declarator; /* without the closing ';' */
};

/* Splits type around name, inserted at name_at (0: where a C declarator puts a name: before the
 * first '[' of "char *[4]", inside the group of "void (*)(int)", else at the end). False when
 * out of memory. */
bool probe_declaration_split(const char *type, size_t name_at, const char *name,
                             struct declaration *out);

void probe_declaration_free(struct declaration *d);

#endif
