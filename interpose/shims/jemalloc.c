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

/* jemalloc's entry points, one line each, as mimalloc.c's (mimalloc's own alloc-override.c is
 * the model): X(return type, name, (parameters), (jemalloc's own function called with the
 * arguments gathered in a), (the arguments gathered), counted call). Each line declares the entry
 * point and its slot for the next definition (JE_DECLARE), defines its forward (JE_FORWARD_*:
 * calls jemalloc's own) and the exported wrapper (JE_DEFINE): its arguments gathered, then the
 * counted call. xallocx, whose result is a size, is written out below the table. */
#define JE_ALLOCS(X)                                                                               \
    X(void *, mallocx, (size_t size, int flags), (a->size, a->flags),                              \
      (.size = size, .flags = flags),                                                              \
      shim_alloc(QAUDIT_mallocx, counted_as(flags), size, true, forward_mallocx, &a))              \
    X(void *, rallocx, (void *ptr, size_t size, int flags), (a->ptr, a->size, a->flags),           \
      (.ptr = ptr, .size = size, .flags = flags), resize(QAUDIT_rallocx, forward_rallocx, &a))
#define JE_FREES(X)                                                                                \
    X(void, sdallocx, (void *ptr, size_t size, int flags), (a->ptr, a->size, a->flags),            \
      (.ptr = ptr, .size = size, .flags = flags),                                                  \
      free_counted(QAUDIT_sdallocx, forward_sdallocx, &a))                                         \
    X(void, dallocx, (void *ptr, int flags), (a->ptr, a->flags), (.ptr = ptr, .flags = flags),     \
      free_counted(QAUDIT_dallocx, forward_dallocx, &a))

#define JE_UNPAREN(...) __VA_ARGS__
#define JE_DECLARE(ret, name, params, call, init, counted)                                         \
    ret name params;                                                                               \
    SHIM_SLOT(name);
JE_ALLOCS(JE_DECLARE)
JE_FREES(JE_DECLARE)
size_t xallocx(void *ptr, size_t size, size_t extra, int flags);
size_t sallocx(const void *ptr, int flags);
SHIM_SLOT(xallocx);
SHIM_SLOT(sallocx);

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

#define JE_FORWARD_ALLOC(ret, name, params, call, init, counted)                                   \
    static void *forward_##name(void *args)                                                        \
    {                                                                                              \
        struct jemalloc_args *a = args;                                                            \
        __typeof__(&name) f = NEXT(name);                                                          \
        return f ? f call : shim_missing();                                                        \
    }
#define JE_FORWARD_FREE(ret, name, params, call, init, counted)                                    \
    static void *forward_##name(void *args)                                                        \
    {                                                                                              \
        struct jemalloc_args *a = args;                                                            \
        __typeof__(&name) f = NEXT(name);                                                          \
        if (f)                                                                                     \
            f call;                                                                                \
        return NULL;                                                                               \
    }
JE_ALLOCS(JE_FORWARD_ALLOC)
JE_FREES(JE_FORWARD_FREE)

/* A resize of a->ptr; from NULL it is undefined for jemalloc, and left to it. */
static inline __attribute__((always_inline)) void *resize(unsigned entry, qaudit_forward_fn forward,
                                                          struct jemalloc_args *a)
{
    if (a->ptr == NULL)
        return forward(a); /* undefined for jemalloc: left to it */
    return shim_resize(entry, QAUDIT_AS_REALLOC, a->ptr, a->size, a->flags & MALLOCX_ZERO, forward,
                       a);
}

static inline __attribute__((always_inline)) void
free_counted(unsigned entry, qaudit_forward_fn forward, struct jemalloc_args *a)
{
    if (a->ptr == NULL)
        forward(a); /* undefined for jemalloc: left to it */
    else
        shim_free(entry, a->ptr, forward, a);
}

#define JE_DEFINE(ret, name, params, call, init, counted)                                          \
    SHIM_EXPORT ret name params                                                                    \
    {                                                                                              \
        struct jemalloc_args a = {JE_UNPAREN init};                                                \
        return counted;                                                                            \
    }
#define JE_DEFINE_FREE(ret, name, params, call, init, counted)                                     \
    SHIM_EXPORT ret name params                                                                    \
    {                                                                                              \
        struct jemalloc_args a = {JE_UNPAREN init};                                                \
        counted;                                                                                   \
    }
JE_ALLOCS(JE_DEFINE)
JE_FREES(JE_DEFINE_FREE)

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
