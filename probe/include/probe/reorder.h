/* A suggested member order for a struct (qaudit layout --reorganize): its own members sorted by
 * alignment, largest first, declaration order kept among equals, a flexible array last, each at
 * the next multiple of its alignment and the whole rounded up to the struct's alignment, as C
 * lays out a struct. A suggestion to weigh, not a layout a compiler emitted: n/a, with why,
 * where moving members is not that simple. */
#ifndef PROBE_REORDER_H
#define PROBE_REORDER_H

#include "probe/layout.h"

struct layout_reorganized {
    const char *not_applicable; /* why no order is suggested ("a union", "bit-fields", ...), or
                                   NULL when type holds one */
    struct layout_type type;    /* the type in the suggested order, its holes and padding found
                                   again; its members' strings are the original type's */
    bool smaller;               /* type is smaller than the original: a suggestion to show */
};

/* Fills out for t (which must outlive it); false only when memory ran out. */
bool layout_reorganize(const struct layout_type *t, struct layout_reorganized *out);
void layout_reorganized_free(struct layout_reorganized *r);

#endif
