/* What the interposer cannot see by interposing malloc: other allocators' own entry points
 * (counted through the shims, extra.c; found at start-up, allocators.c) and anonymous memory no
 * counted block explains (memory.c). Internal to these files and unseen.c. */
#ifndef QAUDIT_UNSEEN_H
#define QAUDIT_UNSEEN_H

#include <link.h>

#include "extra_abi.h"
#include "state.h"

/* extra.c: each entry point's calls, and the shims' code (frames left out of stacks) */
uint64_t qa_extra_calls(unsigned family, unsigned entry);
void qa_extra_reset_after_fork(void);
void qa_extra_add_shim_code(uintptr_t lo, uintptr_t hi);
extern const char *const qa_extra_entry_names[QAUDIT_FAMILIES][QAUDIT_MAX_ENTRIES];
extern const unsigned qa_extra_entry_count[QAUDIT_FAMILIES];

/* loaded_symbols.c: whether a loaded object defines a dynamic symbol (its hash table in memory) */
bool qa_object_defines(const struct dl_phdr_info *info, const char *name);

/* allocators.c: the allocator families loaded at start-up and whether a shim interposes each */
void qa_allocators_detect(void);
bool qa_allocators_write(struct qa_json *j); /* false: one is present but not interposed */

/* memory.c: anonymous memory at start-up and now, against the counted live bytes */
void qa_memory_start(void);
bool qa_memory_write(struct qa_json *j); /* false: growth the counted bytes do not explain */

#endif
