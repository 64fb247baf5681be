/* The gate room: the public probe/gate.h. A baseline's rules checked against a layout (gate.c),
 * written or updated from one (gate_baseline.c), what it says of a type's members (below), and
 * what the gate prints (gate_output.c). Uses walk/ (--functions' code sizes, --type matching,
 * through their public headers), output/ (XML escaping), classes/, spelling/ and base/. Files:
 * the .c files of gate/. */
#ifndef PROBE_ROOM_GATE_H
#define PROBE_ROOM_GATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../base/probe_base.h"
#include "../spelling/probe_spelling.h"
#include "probe/layout.h"

/* ---- gate_members.c -----------------------------------------------------------------------------
 * What a baseline says about a type's members: which members it names (those C can name: own
 * members, members of unnamed struct and union members, base classes by their type), their JSON
 * ({"offset": 96, "size": 32}, or {"bit_offset": 3, "bit_size": 7} for a bit-field), and how
 * today's members differ from it, in words ("queue grew 32 -> 80 B"). */

bool probe_gate_names_member(const struct layout_member *m);

/* The member a baseline names name, or NULL. */
const struct layout_member *probe_gate_find_member(const struct layout_type *t, const char *name);

/* The members object of today's layout: {"fd": {"offset": 0, "size": 4}, ...}. */
json_t *probe_gate_members_json(const struct layout_type *t);

/* Reads {"offset", "size"} or {"bit_offset", "bit_size"}: false when it is neither. */
bool probe_gate_member_parse(json_t *value, bool *bits, long long *offset, long long *size);

/* How member m differs from want ("moved 16 -> 8 (-8 B)", "grew 32 -> 80 B", both joined by
 * " and "), into out; false when it does not. */
bool probe_gate_member_change(const struct layout_member *m, json_t *want, char *out, size_t size);

/* What changed since the baseline's "members" (or, lacking them, its "offsets"): the members
 * added, grown, shrunk or gone, else the first that moved ("queue grew 32 -> 80 B, 4 members
 * after it moved"), into out; "" when nothing can be said. */
void probe_gate_explain(const struct layout_type *t, json_t *rules, char *out, size_t size);

#endif
