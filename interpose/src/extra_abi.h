/* The internal interface between libqaudit-preload.so and its allocator shims
 * (libqaudit-jemalloc.so, libqaudit-tcmalloc.so, libqaudit-mimalloc.so): a versioned table of
 * functions the preload exports under a reserved name, so that a shim counts through the
 * preload's own record functions. Both sides are built from this tree; nothing else uses it. */
#ifndef QAUDIT_EXTRA_ABI_H
#define QAUDIT_EXTRA_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QAUDIT_EXTRA_VERSION 1u

/* The families whose own entry points a shim interposes. */
enum qaudit_family { QAUDIT_JEMALLOC, QAUDIT_TCMALLOC, QAUDIT_MIMALLOC, QAUDIT_FAMILIES };

/* The malloc-family call an entry point is counted as (totals.calls). A zeroed block is counted
 * as calloc, which also keeps QAUDIT_POISON from filling it. */
enum qaudit_as {
    QAUDIT_AS_MALLOC,
    QAUDIT_AS_CALLOC,
    QAUDIT_AS_POSIX_MEMALIGN,
    QAUDIT_AS_ALIGNED_ALLOC,
    QAUDIT_AS_MEMALIGN,
    QAUDIT_AS_VALLOC,
    QAUDIT_AS_PVALLOC,
    QAUDIT_AS_REALLOC,
    QAUDIT_AS_REALLOCARRAY
};

/* Each family's entry points, by the name the dump gives their call counts
 * (precision.allocators.FAMILY.calls). The C++ operators of every form are counted under four
 * names; mimalloc's many forms under the name of their group (docs/dump-format.md). */
#define QAUDIT_OPERATOR_ENTRIES(X)                                                                 \
    X(operator_new, "operator new")                                                                \
    X(operator_new_array, "operator new[]")                                                        \
    X(operator_delete, "operator delete")                                                          \
    X(operator_delete_array, "operator delete[]")

#define QAUDIT_JEMALLOC_OWN(X)                                                                     \
    X(mallocx, "mallocx")                                                                          \
    X(rallocx, "rallocx")                                                                          \
    X(xallocx, "xallocx")                                                                          \
    X(sdallocx, "sdallocx")                                                                        \
    X(dallocx, "dallocx")

#define QAUDIT_TCMALLOC_OWN(X)                                                                     \
    X(tc_malloc, "tc_malloc")                                                                      \
    X(tc_malloc_skip_new_handler, "tc_malloc_skip_new_handler")                                    \
    X(tc_calloc, "tc_calloc")                                                                      \
    X(tc_realloc, "tc_realloc")                                                                    \
    X(tc_memalign, "tc_memalign")                                                                  \
    X(tc_posix_memalign, "tc_posix_memalign")                                                      \
    X(tc_valloc, "tc_valloc")                                                                      \
    X(tc_pvalloc, "tc_pvalloc")                                                                    \
    X(tc_free, "tc_free")                                                                          \
    X(tc_free_sized, "tc_free_sized")                                                              \
    X(tc_cfree, "tc_cfree")                                                                        \
    X(tc_new, "tc_new")                                                                            \
    X(tc_newarray, "tc_newarray")                                                                  \
    X(tc_delete, "tc_delete")                                                                      \
    X(tc_deletearray, "tc_deletearray")

#define QAUDIT_MIMALLOC_OWN(X)                                                                     \
    X(mi_malloc, "mi_malloc")                                                                      \
    X(mi_zalloc, "mi_zalloc")                                                                      \
    X(mi_calloc, "mi_calloc")                                                                      \
    X(mi_realloc, "mi_realloc")                                                                    \
    X(mi_expand, "mi_expand")                                                                      \
    X(mi_free, "mi_free")                                                                          \
    X(mi_aligned, "mi_aligned")                                                                    \
    X(mi_posix, "mi_posix")                                                                        \
    X(mi_strings, "mi_strdup")                                                                     \
    X(mi_new, "mi_new")                                                                            \
    X(mi_heap_alloc, "mi_heap_malloc")                                                             \
    X(mi_heap_realloc, "mi_heap_realloc")                                                          \
    X(mi_heap_destroy, "mi_heap_destroy")

#define QAUDIT_JEMALLOC_ENTRIES(X) QAUDIT_OPERATOR_ENTRIES(X) QAUDIT_JEMALLOC_OWN(X)
#define QAUDIT_TCMALLOC_ENTRIES(X) QAUDIT_OPERATOR_ENTRIES(X) QAUDIT_TCMALLOC_OWN(X)
#define QAUDIT_MIMALLOC_ENTRIES(X) QAUDIT_OPERATOR_ENTRIES(X) QAUDIT_MIMALLOC_OWN(X)

/* Entry ids: the operators first in every family, then the family's own. */
#define QAUDIT_ENTRY_ENUM(id, name) QAUDIT_##id,
enum qaudit_operator_entry { QAUDIT_OPERATOR_ENTRIES(QAUDIT_ENTRY_ENUM) QAUDIT_OPERATOR_COUNT };
enum qaudit_jemalloc_entry {
    QAUDIT_JEMALLOC_BEFORE = QAUDIT_OPERATOR_COUNT - 1,
    QAUDIT_JEMALLOC_OWN(QAUDIT_ENTRY_ENUM) QAUDIT_JEMALLOC_COUNT
};
enum qaudit_tcmalloc_entry {
    QAUDIT_TCMALLOC_BEFORE = QAUDIT_OPERATOR_COUNT - 1,
    QAUDIT_TCMALLOC_OWN(QAUDIT_ENTRY_ENUM) QAUDIT_TCMALLOC_COUNT
};
enum qaudit_mimalloc_entry {
    QAUDIT_MIMALLOC_BEFORE = QAUDIT_OPERATOR_COUNT - 1,
    QAUDIT_MIMALLOC_OWN(QAUDIT_ENTRY_ENUM) QAUDIT_MIMALLOC_COUNT
};
#undef QAUDIT_ENTRY_ENUM
#define QAUDIT_MAX_ENTRIES 32

/* The shim's forwarding step: calls the allocator's own function with the arguments it packed
 * in args, and returns the block (NULL: the allocator failed). */
typedef void *(*qaudit_forward_fn)(void *args);

struct qaudit_extra_v1 {
    uint32_t version; /* QAUDIT_EXTRA_VERSION */
    uint32_t size;    /* sizeof (struct qaudit_extra_v1) */
    /* A new block: forward(args) allocates it, counted as `as` with `size` requested bytes.
     * may_fail: QAUDIT_FAIL may refuse it (forward is not called; NULL with errno ENOMEM). */
    void *(*alloc)(unsigned family, unsigned entry, enum qaudit_as as, size_t size, bool may_fail,
                   qaudit_forward_fn forward, void *args);
    /* A live block p (never NULL) freed by forward(args); forward NULL: only counted (the
     * allocator frees it some other way, e.g. mi_heap_destroy). */
    void (*free)(unsigned family, unsigned entry, void *p, qaudit_forward_fn forward, void *args);
    /* The live block old resized to size: forward(args) returns the block (old when in place),
     * or NULL when the allocator failed and old is untouched (QAUDIT_FAIL may also refuse it:
     * forward is not called). zeroed: bytes past the old size are zero, so poison must leave
     * them. */
    void *(*resize)(unsigned family, unsigned entry, enum qaudit_as as, void *old, size_t size,
                    bool zeroed, qaudit_forward_fn forward, void *args);
    /* A call counted by name only (it allocates and frees nothing the totals see). */
    void (*note)(unsigned family, unsigned entry);
};

/* The table's reserved name in libqaudit-preload.so, and the marker every shim exports (the
 * preload recognises a shim by it). */
#define QAUDIT_EXTRA_TABLE __qaudit_extra_v1
#define QAUDIT_SHIM_MARKER "__qaudit_shim_v1"

#endif
