/* The output room: layouts for people and machines, the public probe/layout_render.h and
 * probe/reorder.h. pahole's columns, Markdown and JSON of a layout (render.c, with each member's
 * declaration split by declarator.c, below), JSON a type at a time (layout_json_stream.c), and
 * --reorganize's order (reorder.c). Reads the layout model of probe/layout.h, never DWARF; uses
 * classes/ (probe/classes.h), measuring/'s holes (layout_find_holes, probe/layout.h) and base/.
 * Files: the .c files of output/. */
#ifndef PROBE_ROOM_OUTPUT_H
#define PROBE_ROOM_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "../base/probe_base.h"

/* ---- declarator.c -------------------------------------------------------------------------------
 * A member's declaration split the way pahole prints it: the type's specifiers in one column
 * ("const char", "void", "char *") and the declarator around the name in the next
 * ("(*strings)[32]", "(*cb)(int, void *)", "e[3]"). */

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
