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

/* Where a name goes in a C abstract declarator spelled as type_names.c spells them: before the
 * first '[' of "char *[4]", inside the group of "void (*)(int)", else at the end. Names that hold
 * parentheses ("(anonymous namespace)::S", "decltype(nullptr)", "f()::Local") are skipped. */
size_t declarator_name_at(const char *type);

/* Splits type around name, inserted at name_at (0: found by declarator_name_at). False when
 * out of memory. */
bool declaration_split(const char *type, size_t name_at, const char *name, struct declaration *out);

void declaration_free(struct declaration *d);

#endif
