/* The walk room: what reads a binary for the command and the gate. Its types (dwarf_reader.c:
 * layout_read and the others of probe/layout.h): every unit walked once, or those a name index
 * chooses, the types --type asks for matched (type_match.c, probe/type_match.h), one kept per
 * definition (type_set.c, below); its functions (function_sizes.c: probe/functions.h). Uses
 * measuring/ and the rooms below it. Files: the .c files of walk/. */
#ifndef PROBE_ROOM_WALK_H
#define PROBE_ROOM_WALK_H

#include <stdbool.h>
#include <stddef.h>

#include "../measuring/probe_measuring.h"

/* ---- type_set.c -------------------------------------------------------------------------------
 * The types kept from every unit: one per definition, those met again in other units dropped, a
 * name defined differently in two units flagged (ODR). */

/* Names seen so far -> index of their first definition: an open-addressing table. */
struct seen {
    size_t *slots; /* index + 1, 0 empty */
    size_t capacity;
};

void probe_free_type(struct layout_type *t);
bool probe_already_kept(const struct layout_set *set, const struct seen *seen,
                        const struct layout_type *t);
bool probe_keep(struct layout_set *set, struct seen *seen, struct layout_type *t);

#endif
