/* What the allocator shims share (shim.c): the preload's table, reached through a weak reference
 * (the loader binds it before any code runs; NULL without the preload, and then a shim only
 * forwards), the allocator's own functions found with dlsym(RTLD_NEXT), and the calls that count
 * through the table. Each shim defines shim_family and exports QAUDIT_SHIM_MARKER. */
#ifndef QAUDIT_SHIM_H
#define QAUDIT_SHIM_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "extra_abi.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

extern const unsigned shim_family;
extern const struct qaudit_extra_v1 QAUDIT_EXTRA_TABLE __attribute__((weak));

/* The next definition of name after this shim (the allocator's own), found once; NULL when none
 * follows, which is said once on stderr. */
void *shim_next(_Atomic(void *) *slot, const char *name);
#define SHIM_SLOT(name) static _Atomic(void *) next_##name
#define NEXT(name) ((__typeof__(&name))shim_next(&next_##name, #name))

/* What an allocating forward returns when the allocator is missing. */
void *shim_missing(void);

/* Inlined into each entry point, so that a stack taken under it holds one shim frame: the
 * preload leaves it out and the site starts at the program's call. */
static inline __attribute__((always_inline)) const struct qaudit_extra_v1 *shim_table(void)
{
    const struct qaudit_extra_v1 *t = &QAUDIT_EXTRA_TABLE;
    if (t == NULL || t->version != QAUDIT_EXTRA_VERSION || t->size < sizeof *t)
        return NULL;
    return t;
}

static inline __attribute__((always_inline)) void *shim_alloc(unsigned entry, enum qaudit_as as,
                                                              size_t size, bool may_fail,
                                                              qaudit_forward_fn forward, void *args)
{
    const struct qaudit_extra_v1 *t = shim_table();
    return t ? t->alloc(shim_family, entry, as, size, may_fail, forward, args) : forward(args);
}

static inline __attribute__((always_inline)) void shim_free(unsigned entry, void *p,
                                                            qaudit_forward_fn forward, void *args)
{
    const struct qaudit_extra_v1 *t = shim_table();
    if (t)
        t->free(shim_family, entry, p, forward, args);
    else if (forward)
        forward(args);
}

static inline __attribute__((always_inline)) void *shim_resize(unsigned entry, enum qaudit_as as,
                                                               void *old, size_t size, bool zeroed,
                                                               qaudit_forward_fn forward,
                                                               void *args)
{
    const struct qaudit_extra_v1 *t = shim_table();
    return t ? t->resize(shim_family, entry, as, old, size, zeroed, forward, args) : forward(args);
}

static inline __attribute__((always_inline)) void shim_note(unsigned entry)
{
    const struct qaudit_extra_v1 *t = shim_table();
    if (t)
        t->note(shim_family, entry);
}

/* n * size, or false when it overflows (the allocator then fails the call on its own). */
static inline bool shim_product(size_t n, size_t size, size_t *out)
{
    return !__builtin_mul_overflow(n, size, out);
}

#endif
