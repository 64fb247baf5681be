/* libqaudit-jemalloc.so: jemalloc's own entry points (mallocx, rallocx, xallocx, sdallocx,
 * dallocx, and the C++ operators in shim.c), counted by libqaudit-preload.so as the malloc
 * family and forwarded to jemalloc. Preloaded right after libqaudit-preload.so and only where
 * jemalloc is loaded: it exports jemalloc's names, and a program looking for them must not find
 * them where jemalloc is absent. sallocx and nallocx allocate nothing and are left to jemalloc. */
#include "shim.h"

const unsigned shim_family = QAUDIT_JEMALLOC;
SHIM_EXPORT const char __qaudit_shim_v1[] = "jemalloc";

#define MALLOCX_ZERO 0x40
#define MALLOCX_LG_ALIGN_MASK 0x3f

void *mallocx(size_t size, int flags);
void *rallocx(void *ptr, size_t size, int flags);
size_t xallocx(void *ptr, size_t size, size_t extra, int flags);
size_t sallocx(const void *ptr, int flags);
void sdallocx(void *ptr, size_t size, int flags);
void dallocx(void *ptr, int flags);
SHIM_SLOT(mallocx);
SHIM_SLOT(rallocx);
SHIM_SLOT(xallocx);
SHIM_SLOT(sallocx);
SHIM_SLOT(sdallocx);
SHIM_SLOT(dallocx);

/* A zeroed block counts as calloc (poison must not fill it), an aligned one as aligned_alloc. */
static enum qaudit_as counted_as(int flags)
{
    if (flags & MALLOCX_ZERO)
        return QAUDIT_AS_CALLOC;
    return (flags & MALLOCX_LG_ALIGN_MASK) ? QAUDIT_AS_ALIGNED_ALLOC : QAUDIT_AS_MALLOC;
}

struct jemalloc_args {
    void *ptr;
    size_t size, extra;
    int flags;
    size_t result; /* xallocx's */
    bool called;
};

static void *forward_mallocx(void *args)
{
    struct jemalloc_args *a = args;
    __typeof__(&mallocx) f = NEXT(mallocx);
    return f ? f(a->size, a->flags) : shim_missing();
}

SHIM_EXPORT void *mallocx(size_t size, int flags)
{
    struct jemalloc_args a = {.size = size, .flags = flags};
    return shim_alloc(QAUDIT_mallocx, counted_as(flags), size, true, forward_mallocx, &a);
}

static void *forward_rallocx(void *args)
{
    struct jemalloc_args *a = args;
    __typeof__(&rallocx) f = NEXT(rallocx);
    return f ? f(a->ptr, a->size, a->flags) : shim_missing();
}

SHIM_EXPORT void *rallocx(void *ptr, size_t size, int flags)
{
    struct jemalloc_args a = {.ptr = ptr, .size = size, .flags = flags};
    if (ptr == NULL)
        return forward_rallocx(&a); /* undefined for jemalloc: left to it */
    return shim_resize(QAUDIT_rallocx, QAUDIT_AS_REALLOC, ptr, size, flags & MALLOCX_ZERO,
                       forward_rallocx, &a);
}

/* xallocx resizes in place or not at all and returns the block's size either way: a resize that
 * reached size is an in-place realloc, one that did not changed nothing. */
static void *forward_xallocx(void *args)
{
    struct jemalloc_args *a = args;
    __typeof__(&xallocx) f = NEXT(xallocx);
    a->called = true;
    a->result = f ? f(a->ptr, a->size, a->extra, a->flags) : 0;
    return a->result >= a->size ? a->ptr : NULL;
}

SHIM_EXPORT size_t xallocx(void *ptr, size_t size, size_t extra, int flags)
{
    struct jemalloc_args a = {.ptr = ptr, .size = size, .extra = extra, .flags = flags};
    if (ptr == NULL) {
        forward_xallocx(&a); /* undefined for jemalloc: left to it */
        return a.result;
    }
    int saved = errno;
    shim_resize(QAUDIT_xallocx, QAUDIT_AS_REALLOC, ptr, size, flags & MALLOCX_ZERO, forward_xallocx,
                &a);
    errno = saved;
    if (!a.called) { /* refused by QAUDIT_FAIL: the block keeps its size */
        __typeof__(&sallocx) s = NEXT(sallocx);
        a.result = s ? s(ptr, flags) : 0;
    }
    return a.result;
}

static void *forward_sdallocx(void *args)
{
    struct jemalloc_args *a = args;
    __typeof__(&sdallocx) f = NEXT(sdallocx);
    if (f)
        f(a->ptr, a->size, a->flags);
    return NULL;
}

SHIM_EXPORT void sdallocx(void *ptr, size_t size, int flags)
{
    struct jemalloc_args a = {.ptr = ptr, .size = size, .flags = flags};
    if (ptr == NULL)
        forward_sdallocx(&a); /* undefined for jemalloc: left to it */
    else
        shim_free(QAUDIT_sdallocx, ptr, forward_sdallocx, &a);
}

static void *forward_dallocx(void *args)
{
    struct jemalloc_args *a = args;
    __typeof__(&dallocx) f = NEXT(dallocx);
    if (f)
        f(a->ptr, a->flags);
    return NULL;
}

SHIM_EXPORT void dallocx(void *ptr, int flags)
{
    struct jemalloc_args a = {.ptr = ptr, .flags = flags};
    if (ptr == NULL)
        forward_dallocx(&a); /* undefined for jemalloc: left to it */
    else
        shim_free(QAUDIT_dallocx, ptr, forward_dallocx, &a);
}
