/* The member list of a type being read: appended to by members.c, spliced into by
 * virtual_bases.c (a virtual base and its members go where their offset puts them). Apart from
 * both, so that neither file calls the other for it. */
#ifndef PROBE_MEMBER_LIST_H
#define PROBE_MEMBER_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "probe/layout.h"

/* Appends m to t's members (t owns m's strings after). False when out of memory (m is then the
 * caller's to free). */
bool probe_add_member(struct layout_type *t, struct layout_member m);

/* Moves block's members into t's at position at, block left empty. False when out of memory
 * (both unchanged). */
bool probe_splice_members(struct layout_type *t, size_t at, struct layout_type *block);

#endif
