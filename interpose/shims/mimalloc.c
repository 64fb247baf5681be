/* libqaudit-mimalloc.so: mimalloc's own entry points that allocate, resize or free (mi_malloc,
 * mi_calloc, mi_realloc, mi_free and their zeroed, counted, aligned, string, posix, new and
 * mi_heap_* forms, mi_heap_destroy, and the C++ operators in shim.c), counted by
 * libqaudit-preload.so as the malloc family and forwarded to mimalloc. Preloaded right after
 * libqaudit-preload.so and only where mimalloc is loaded. Calls that allocate nothing
 * (mi_usable_size, mi_good_size, options, statistics, mi_heap_new/delete's bookkeeping, which
 * reaches mi_heap_malloc and mi_free and is counted there) are left to mimalloc. */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

const unsigned shim_family = QAUDIT_MIMALLOC;
SHIM_EXPORT const char __qaudit_shim_v1[] = "mimalloc";

/* How a forward calls the allocator: up to four sizes after no, one (p) or two (h, p)
 * pointers. mimalloc's heaps are opaque pointers here. */
enum shape { A1, A2, A3, A4, P0, P1, P2, P3, P4, PP0, PP1, PP2, PP3, PP4, F0, F1, F2 };
struct mi_args {
    _Atomic(void *) *slot;
    const char *name;
    enum shape shape;
    void *h, *p;
    size_t a, b, c, d;
};
#define MI(fn, shape, ...)                                                                         \
    {                                                                                              \
        &next_##fn, #fn, shape, __VA_ARGS__                                                        \
    }

typedef void *(*sizes1)(size_t);
typedef void *(*sizes2)(size_t, size_t);
typedef void *(*sizes3)(size_t, size_t, size_t);
typedef void *(*sizes4)(size_t, size_t, size_t, size_t);
typedef void *(*ptr0)(void *);
typedef void *(*ptr1)(void *, size_t);
typedef void *(*ptr2)(void *, size_t, size_t);
typedef void *(*ptr3)(void *, size_t, size_t, size_t);
typedef void *(*ptr4)(void *, size_t, size_t, size_t, size_t);
typedef void *(*two0)(void *, void *);
typedef void *(*two1)(void *, void *, size_t);
typedef void *(*two2)(void *, void *, size_t, size_t);
typedef void *(*two3)(void *, void *, size_t, size_t, size_t);
typedef void *(*two4)(void *, void *, size_t, size_t, size_t, size_t);
typedef void (*free0)(void *);
typedef void (*free1)(void *, size_t);
typedef void (*free2)(void *, size_t, size_t);

static void *call(void *f, const struct mi_args *x)
{
    switch (x->shape) {
    case A1:
        return ((sizes1)f)(x->a);
    case A2:
        return ((sizes2)f)(x->a, x->b);
    case A3:
        return ((sizes3)f)(x->a, x->b, x->c);
    case A4:
        return ((sizes4)f)(x->a, x->b, x->c, x->d);
    case P0:
        return ((ptr0)f)(x->p);
    case P1:
        return ((ptr1)f)(x->p, x->a);
    case P2:
        return ((ptr2)f)(x->p, x->a, x->b);
    case P3:
        return ((ptr3)f)(x->p, x->a, x->b, x->c);
    case P4:
        return ((ptr4)f)(x->p, x->a, x->b, x->c, x->d);
    case PP0:
        return ((two0)f)(x->h, x->p);
    case PP1:
        return ((two1)f)(x->h, x->p, x->a);
    case PP2:
        return ((two2)f)(x->h, x->p, x->a, x->b);
    case PP3:
        return ((two3)f)(x->h, x->p, x->a, x->b, x->c);
    case PP4:
        return ((two4)f)(x->h, x->p, x->a, x->b, x->c, x->d);
    case F0:
        ((free0)f)(x->p);
        return NULL;
    case F1:
        ((free1)f)(x->p, x->a);
        return NULL;
    case F2:
        ((free2)f)(x->p, x->a, x->b);
        return NULL;
    }
    return NULL;
}

static void *forward(void *args)
{
    struct mi_args *x = args;
    void *f = shim_next(x->slot, x->name);
    return f ? call(f, x) : shim_missing();
}

/* An allocation of n * size bytes; an overflowing product is the allocator's to fail. */
static inline __attribute__((always_inline)) void *alloc_n(unsigned entry, enum qaudit_as as,
                                                           size_t n, size_t size, struct mi_args *x)
{
    size_t bytes;
    if (!shim_product(n, size, &bytes))
        return forward(x);
    return shim_alloc(entry, as, bytes, true, forward, x);
}

/* A resize of p to size bytes; from NULL it is an allocation, counted as `as`. */
static inline __attribute__((always_inline)) void *
resize(unsigned entry, enum qaudit_as as, void *p, size_t size, bool zeroed, struct mi_args *x)
{
    if (p == NULL)
        return shim_alloc(entry, zeroed ? QAUDIT_AS_CALLOC : as, size, true, forward, x);
    return shim_resize(entry, QAUDIT_AS_REALLOC, p, size, zeroed, forward, x);
}

static inline __attribute__((always_inline)) void *resize_n(unsigned entry, enum qaudit_as as,
                                                            void *p, size_t n, size_t size,
                                                            bool zeroed, struct mi_args *x)
{
    size_t bytes;
    if (!shim_product(n, size, &bytes))
        return forward(x);
    return resize(entry, as, p, bytes, zeroed, x);
}

static inline __attribute__((always_inline)) void free_counted(unsigned entry, struct mi_args *x)
{
    if (x->p != NULL) /* freeing a null pointer does nothing */
        shim_free(entry, x->p, forward, x);
}

/* mimalloc's regular entry points, one line each (mimalloc's own alloc-override.c is the model):
 * X(return type, name, (parameters), forward shape, (forward arguments), counted call). Each
 * line declares the entry point and its slot for the next definition (MI_DECLARE) and defines
 * the exported wrapper (MI_DEFINE): its arguments gathered for the forward, then the counted
 * call, which reads them through x. The frees likewise (MI_FREES: the entry counted as). The
 * entry points below the table do more than one counted call, and are written out. */
#define MI_ALLOCS(X)                                                                               \
    X(void *, mi_malloc, (size_t size), A1, (.a = size),                                           \
      shim_alloc(QAUDIT_mi_malloc, QAUDIT_AS_MALLOC, size, true, forward, &x))                     \
    X(void *, mi_malloc_small, (size_t size), A1, (.a = size),                                     \
      shim_alloc(QAUDIT_mi_malloc, QAUDIT_AS_MALLOC, size, true, forward, &x))                     \
    X(void *, mi_zalloc, (size_t size), A1, (.a = size),                                           \
      shim_alloc(QAUDIT_mi_zalloc, QAUDIT_AS_CALLOC, size, true, forward, &x))                     \
    X(void *, mi_zalloc_small, (size_t size), A1, (.a = size),                                     \
      shim_alloc(QAUDIT_mi_zalloc, QAUDIT_AS_CALLOC, size, true, forward, &x))                     \
    X(void *, mi_calloc, (size_t n, size_t size), A2, (.a = n, .b = size),                         \
      alloc_n(QAUDIT_mi_calloc, QAUDIT_AS_CALLOC, n, size, &x))                                    \
    X(void *, mi_mallocn, (size_t n, size_t size), A2, (.a = n, .b = size),                        \
      alloc_n(QAUDIT_mi_malloc, QAUDIT_AS_MALLOC, n, size, &x))                                    \
    X(void *, mi_realloc, (void *p, size_t size), P1, (.p = p, .a = size),                         \
      resize(QAUDIT_mi_realloc, QAUDIT_AS_MALLOC, p, size, false, &x))                             \
    X(void *, mi_reallocn, (void *p, size_t n, size_t size), P2, (.p = p, .a = n, .b = size),      \
      resize_n(QAUDIT_mi_realloc, QAUDIT_AS_MALLOC, p, n, size, false, &x))                        \
    X(void *, mi_rezalloc, (void *p, size_t size), P1, (.p = p, .a = size),                        \
      resize(QAUDIT_mi_realloc, QAUDIT_AS_CALLOC, p, size, true, &x))                              \
    X(void *, mi_recalloc, (void *p, size_t n, size_t size), P2, (.p = p, .a = n, .b = size),      \
      resize_n(QAUDIT_mi_realloc, QAUDIT_AS_CALLOC, p, n, size, true, &x))                         \
    X(void *, mi_malloc_aligned, (size_t size, size_t align), A2, (.a = size, .b = align),         \
      shim_alloc(QAUDIT_mi_aligned, QAUDIT_AS_ALIGNED_ALLOC, size, true, forward, &x))             \
    X(void *, mi_malloc_aligned_at, (size_t size, size_t align, size_t offset), A3,                \
      (.a = size, .b = align, .c = offset),                                                        \
      shim_alloc(QAUDIT_mi_aligned, QAUDIT_AS_ALIGNED_ALLOC, size, true, forward, &x))             \
    X(void *, mi_zalloc_aligned, (size_t size, size_t align), A2, (.a = size, .b = align),         \
      shim_alloc(QAUDIT_mi_aligned, QAUDIT_AS_CALLOC, size, true, forward, &x))                    \
    X(void *, mi_zalloc_aligned_at, (size_t size, size_t align, size_t offset), A3,                \
      (.a = size, .b = align, .c = offset),                                                        \
      shim_alloc(QAUDIT_mi_aligned, QAUDIT_AS_CALLOC, size, true, forward, &x))                    \
    X(void *, mi_calloc_aligned, (size_t n, size_t size, size_t align), A3,                        \
      (.a = n, .b = size, .c = align), alloc_n(QAUDIT_mi_aligned, QAUDIT_AS_CALLOC, n, size, &x))  \
    X(void *, mi_calloc_aligned_at, (size_t n, size_t size, size_t align, size_t offset), A4,      \
      (.a = n, .b = size, .c = align, .d = offset),                                                \
      alloc_n(QAUDIT_mi_aligned, QAUDIT_AS_CALLOC, n, size, &x))                                   \
    X(void *, mi_realloc_aligned, (void *p, size_t size, size_t align), P2,                        \
      (.p = p, .a = size, .b = align),                                                             \
      resize(QAUDIT_mi_aligned, QAUDIT_AS_ALIGNED_ALLOC, p, size, false, &x))                      \
    X(void *, mi_realloc_aligned_at, (void *p, size_t size, size_t align, size_t offset), P3,      \
      (.p = p, .a = size, .b = align, .c = offset),                                                \
      resize(QAUDIT_mi_aligned, QAUDIT_AS_ALIGNED_ALLOC, p, size, false, &x))                      \
    X(void *, mi_rezalloc_aligned, (void *p, size_t size, size_t align), P2,                       \
      (.p = p, .a = size, .b = align),                                                             \
      resize(QAUDIT_mi_aligned, QAUDIT_AS_CALLOC, p, size, true, &x))                              \
    X(void *, mi_rezalloc_aligned_at, (void *p, size_t size, size_t align, size_t offset), P3,     \
      (.p = p, .a = size, .b = align, .c = offset),                                                \
      resize(QAUDIT_mi_aligned, QAUDIT_AS_CALLOC, p, size, true, &x))                              \
    X(void *, mi_recalloc_aligned, (void *p, size_t n, size_t size, size_t align), P3,             \
      (.p = p, .a = n, .b = size, .c = align),                                                     \
      resize_n(QAUDIT_mi_aligned, QAUDIT_AS_CALLOC, p, n, size, true, &x))                         \
    X(void *, mi_recalloc_aligned_at,                                                              \
      (void *p, size_t n, size_t size, size_t align, size_t offset), P4,                           \
      (.p = p, .a = n, .b = size, .c = align, .d = offset),                                        \
      resize_n(QAUDIT_mi_aligned, QAUDIT_AS_CALLOC, p, n, size, true, &x))                         \
    X(void *, mi_aligned_recalloc, (void *p, size_t n, size_t size, size_t align), P3,             \
      (.p = p, .a = n, .b = size, .c = align),                                                     \
      resize_n(QAUDIT_mi_aligned, QAUDIT_AS_CALLOC, p, n, size, true, &x))                         \
    X(void *, mi_aligned_offset_recalloc,                                                          \
      (void *p, size_t n, size_t size, size_t align, size_t offset), P4,                           \
      (.p = p, .a = n, .b = size, .c = align, .d = offset),                                        \
      resize_n(QAUDIT_mi_aligned, QAUDIT_AS_CALLOC, p, n, size, true, &x))                         \
    X(void *, mi_memalign, (size_t align, size_t size), A2, (.a = align, .b = size),               \
      shim_alloc(QAUDIT_mi_posix, QAUDIT_AS_MEMALIGN, size, true, forward, &x))                    \
    X(void *, mi_aligned_alloc, (size_t align, size_t size), A2, (.a = align, .b = size),          \
      shim_alloc(QAUDIT_mi_posix, QAUDIT_AS_ALIGNED_ALLOC, size, true, forward, &x))               \
    X(void *, mi_valloc, (size_t size), A1, (.a = size),                                           \
      shim_alloc(QAUDIT_mi_posix, QAUDIT_AS_VALLOC, size, true, forward, &x))                      \
    X(void *, mi_pvalloc, (size_t size), A1, (.a = size),                                          \
      shim_alloc(QAUDIT_mi_posix, QAUDIT_AS_PVALLOC, size, true, forward, &x))                     \
    X(void *, mi_new_nothrow, (size_t size), A1, (.a = size),                                      \
      shim_alloc(QAUDIT_mi_new, QAUDIT_AS_MALLOC, size, true, forward, &x))                        \
    X(void *, mi_new_aligned_nothrow, (size_t size, size_t align), A2, (.a = size, .b = align),    \
      shim_alloc(QAUDIT_mi_new, QAUDIT_AS_ALIGNED_ALLOC, size, true, forward, &x))                 \
    X(void *, mi_heap_malloc, (void *h, size_t size), P1, (.p = h, .a = size),                     \
      shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_MALLOC, size, true, forward, &x))                 \
    X(void *, mi_heap_malloc_small, (void *h, size_t size), P1, (.p = h, .a = size),               \
      shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_MALLOC, size, true, forward, &x))                 \
    X(void *, mi_heap_zalloc, (void *h, size_t size), P1, (.p = h, .a = size),                     \
      shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_CALLOC, size, true, forward, &x))                 \
    X(void *, mi_heap_calloc, (void *h, size_t n, size_t size), P2, (.p = h, .a = n, .b = size),   \
      alloc_n(QAUDIT_mi_heap_alloc, QAUDIT_AS_CALLOC, n, size, &x))                                \
    X(void *, mi_heap_mallocn, (void *h, size_t n, size_t size), P2, (.p = h, .a = n, .b = size),  \
      alloc_n(QAUDIT_mi_heap_alloc, QAUDIT_AS_MALLOC, n, size, &x))                                \
    X(void *, mi_heap_malloc_aligned, (void *h, size_t size, size_t align), P2,                    \
      (.p = h, .a = size, .b = align),                                                             \
      shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_ALIGNED_ALLOC, size, true, forward, &x))          \
    X(void *, mi_heap_malloc_aligned_at, (void *h, size_t size, size_t align, size_t offset), P3,  \
      (.p = h, .a = size, .b = align, .c = offset),                                                \
      shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_ALIGNED_ALLOC, size, true, forward, &x))          \
    X(void *, mi_heap_zalloc_aligned, (void *h, size_t size, size_t align), P2,                    \
      (.p = h, .a = size, .b = align),                                                             \
      shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_CALLOC, size, true, forward, &x))                 \
    X(void *, mi_heap_zalloc_aligned_at, (void *h, size_t size, size_t align, size_t offset), P3,  \
      (.p = h, .a = size, .b = align, .c = offset),                                                \
      shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_CALLOC, size, true, forward, &x))                 \
    X(void *, mi_heap_calloc_aligned, (void *h, size_t n, size_t size, size_t align), P3,          \
      (.p = h, .a = n, .b = size, .c = align),                                                     \
      alloc_n(QAUDIT_mi_heap_alloc, QAUDIT_AS_CALLOC, n, size, &x))                                \
    X(void *, mi_heap_calloc_aligned_at,                                                           \
      (void *h, size_t n, size_t size, size_t align, size_t offset), P4,                           \
      (.p = h, .a = n, .b = size, .c = align, .d = offset),                                        \
      alloc_n(QAUDIT_mi_heap_alloc, QAUDIT_AS_CALLOC, n, size, &x))                                \
    X(void *, mi_heap_realloc, (void *h, void *p, size_t size), PP1, (.h = h, .p = p, .a = size),  \
      resize(QAUDIT_mi_heap_realloc, QAUDIT_AS_MALLOC, p, size, false, &x))                        \
    X(void *, mi_heap_reallocn, (void *h, void *p, size_t n, size_t size), PP2,                    \
      (.h = h, .p = p, .a = n, .b = size),                                                         \
      resize_n(QAUDIT_mi_heap_realloc, QAUDIT_AS_MALLOC, p, n, size, false, &x))                   \
    X(void *, mi_heap_rezalloc, (void *h, void *p, size_t size), PP1, (.h = h, .p = p, .a = size), \
      resize(QAUDIT_mi_heap_realloc, QAUDIT_AS_CALLOC, p, size, true, &x))                         \
    X(void *, mi_heap_recalloc, (void *h, void *p, size_t n, size_t size), PP2,                    \
      (.h = h, .p = p, .a = n, .b = size),                                                         \
      resize_n(QAUDIT_mi_heap_realloc, QAUDIT_AS_CALLOC, p, n, size, true, &x))                    \
    X(void *, mi_heap_realloc_aligned, (void *h, void *p, size_t size, size_t align), PP2,         \
      (.h = h, .p = p, .a = size, .b = align),                                                     \
      resize(QAUDIT_mi_heap_realloc, QAUDIT_AS_ALIGNED_ALLOC, p, size, false, &x))                 \
    X(void *, mi_heap_realloc_aligned_at,                                                          \
      (void *h, void *p, size_t size, size_t align, size_t offset), PP3,                           \
      (.h = h, .p = p, .a = size, .b = align, .c = offset),                                        \
      resize(QAUDIT_mi_heap_realloc, QAUDIT_AS_ALIGNED_ALLOC, p, size, false, &x))                 \
    X(void *, mi_heap_rezalloc_aligned, (void *h, void *p, size_t size, size_t align), PP2,        \
      (.h = h, .p = p, .a = size, .b = align),                                                     \
      resize(QAUDIT_mi_heap_realloc, QAUDIT_AS_CALLOC, p, size, true, &x))                         \
    X(void *, mi_heap_rezalloc_aligned_at,                                                         \
      (void *h, void *p, size_t size, size_t align, size_t offset), PP3,                           \
      (.h = h, .p = p, .a = size, .b = align, .c = offset),                                        \
      resize(QAUDIT_mi_heap_realloc, QAUDIT_AS_CALLOC, p, size, true, &x))                         \
    X(void *, mi_heap_recalloc_aligned, (void *h, void *p, size_t n, size_t size, size_t align),   \
      PP3, (.h = h, .p = p, .a = n, .b = size, .c = align),                                        \
      resize_n(QAUDIT_mi_heap_realloc, QAUDIT_AS_CALLOC, p, n, size, true, &x))                    \
    X(void *, mi_heap_recalloc_aligned_at,                                                         \
      (void *h, void *p, size_t n, size_t size, size_t align, size_t offset), PP4,                 \
      (.h = h, .p = p, .a = n, .b = size, .c = align, .d = offset),                                \
      resize_n(QAUDIT_mi_heap_realloc, QAUDIT_AS_CALLOC, p, n, size, true, &x))

#define MI_FREES(X)                                                                                \
    X(mi_free, (void *p), F0, (.p = p), QAUDIT_mi_free)                                            \
    X(mi_cfree, (void *p), F0, (.p = p), QAUDIT_mi_free)                                           \
    X(mi_free_size, (void *p, size_t size), F1, (.p = p, .a = size), QAUDIT_mi_free)               \
    X(mi_free_aligned, (void *p, size_t align), F1, (.p = p, .a = align), QAUDIT_mi_free)          \
    X(mi_free_size_aligned, (void *p, size_t size, size_t align), F2,                              \
      (.p = p, .a = size, .b = align), QAUDIT_mi_free)

#define MI_UNPAREN(...) __VA_ARGS__
#define MI_DECLARE(ret, name, params, shape, init, call)                                           \
    ret name params;                                                                               \
    SHIM_SLOT(name);
#define MI_DEFINE(ret, name, params, shape, init, call)                                            \
    SHIM_EXPORT ret name params                                                                    \
    {                                                                                              \
        struct mi_args x = MI(name, shape, MI_UNPAREN init);                                       \
        return call;                                                                               \
    }
#define MI_DECLARE_FREE(name, params, shape, init, entry)                                          \
    void name params;                                                                              \
    SHIM_SLOT(name);
#define MI_DEFINE_FREE(name, params, shape, init, entry)                                           \
    SHIM_EXPORT void name params                                                                   \
    {                                                                                              \
        struct mi_args x = MI(name, shape, MI_UNPAREN init);                                       \
        free_counted(entry, &x);                                                                   \
    }

MI_ALLOCS(MI_DECLARE)
MI_FREES(MI_DECLARE_FREE)
MI_ALLOCS(MI_DEFINE)
MI_FREES(MI_DEFINE_FREE)

/* The basic calls. */
void *mi_reallocf(void *p, size_t size);
void *mi_reallocarray(void *p, size_t n, size_t size);
int mi_reallocarr(void *p, size_t n, size_t size);
void *mi_expand(void *p, size_t size);
void *mi__expand(void *p, size_t size);
SHIM_SLOT(mi_reallocarray);
SHIM_SLOT(mi_reallocarr);
SHIM_SLOT(mi_expand);
SHIM_SLOT(mi__expand);

/* As mimalloc does it: a failed realloc frees the block. */
SHIM_EXPORT void *mi_reallocf(void *p, size_t size)
{
    struct mi_args x = MI(mi_realloc, P1, .p = p, .a = size);
    void *q = resize(QAUDIT_mi_realloc, QAUDIT_AS_MALLOC, p, size, false, &x);
    if (q == NULL && p != NULL) {
        struct mi_args f = MI(mi_free, F0, .p = p);
        free_counted(QAUDIT_mi_free, &f);
    }
    return q;
}

SHIM_EXPORT void *mi_reallocarray(void *p, size_t n, size_t size)
{
    struct mi_args x = MI(mi_reallocarray, P2, .p = p, .a = n, .b = size);
    size_t bytes;
    if (p == NULL || !shim_product(n, size, &bytes))
        return resize_n(QAUDIT_mi_realloc, QAUDIT_AS_MALLOC, p, n, size, false, &x);
    return shim_resize(QAUDIT_mi_realloc, QAUDIT_AS_REALLOCARRAY, p, bytes, false, forward, &x);
}

/* mi_reallocarr(&p, n, size): resizes *p in place of the pointer, returns 0 or an errno. */
struct reallocarr_args {
    void *pp;
    size_t n, size;
    int error;
};

static void *forward_reallocarr(void *args)
{
    struct reallocarr_args *a = args;
    __typeof__(&mi_reallocarr) f = NEXT(mi_reallocarr);
    a->error = f ? f(a->pp, a->n, a->size) : ENOMEM;
    void *now;
    memcpy(&now, a->pp, sizeof now);
    return a->error == 0 ? now : NULL;
}

SHIM_EXPORT int mi_reallocarr(void *pp, size_t n, size_t size)
{
    struct reallocarr_args a = {pp, n, size, ENOMEM};
    void *old = NULL;
    size_t bytes;
    if (pp != NULL)
        memcpy(&old, pp, sizeof old);
    if (pp == NULL || !shim_product(n, size, &bytes))
        forward_reallocarr(&a);
    else if (old == NULL)
        shim_alloc(QAUDIT_mi_realloc, QAUDIT_AS_MALLOC, bytes, true, forward_reallocarr, &a);
    else
        shim_resize(QAUDIT_mi_realloc, QAUDIT_AS_REALLOCARRAY, old, bytes, false,
                    forward_reallocarr, &a);
    return a.error;
}

SHIM_EXPORT void *mi_expand(void *p, size_t size)
{
    struct mi_args x = MI(mi_expand, P1, .p = p, .a = size);
    if (p == NULL)
        return forward(&x);
    return shim_resize(QAUDIT_mi_expand, QAUDIT_AS_REALLOC, p, size, false, forward, &x);
}

SHIM_EXPORT void *mi__expand(void *p, size_t size)
{
    struct mi_args x = MI(mi__expand, P1, .p = p, .a = size);
    if (p == NULL)
        return forward(&x);
    return shim_resize(QAUDIT_mi_expand, QAUDIT_AS_REALLOC, p, size, false, forward, &x);
}

/* The posix names. */
int mi_posix_memalign(void **out, size_t align, size_t size);
SHIM_SLOT(mi_posix_memalign);

struct posix_memalign_args {
    size_t align, size;
    int error;
    bool called;
};

static void *forward_posix_memalign(void *args)
{
    struct posix_memalign_args *a = args;
    __typeof__(&mi_posix_memalign) f = NEXT(mi_posix_memalign);
    void *p = NULL;
    a->called = true;
    a->error = f ? f(&p, a->align, a->size) : ENOMEM;
    return a->error == 0 ? p : NULL;
}

SHIM_EXPORT int mi_posix_memalign(void **out, size_t align, size_t size)
{
    struct posix_memalign_args a = {align, size, 0, false};
    void *p = shim_alloc(QAUDIT_mi_posix, QAUDIT_AS_POSIX_MEMALIGN, size, true,
                         forward_posix_memalign, &a);
    if (p == NULL)
        return a.called ? a.error : ENOMEM;
    *out = p;
    return 0;
}

/* Strings: the copy's size is known before the call. realpath copies into a buffer of its own
 * first, then duplicates it, as mimalloc does. */
char *mi_strdup(const char *s);
char *mi_strndup(const char *s, size_t n);
char *mi_realpath(const char *name, char *resolved);
unsigned char *mi_mbsdup(const unsigned char *s);
unsigned short *mi_wcsdup(const unsigned short *s);
int mi_dupenv_s(char **buf, size_t *size, const char *name);
SHIM_SLOT(mi_strdup);
SHIM_SLOT(mi_strndup);
SHIM_SLOT(mi_realpath);
SHIM_SLOT(mi_mbsdup);
SHIM_SLOT(mi_wcsdup);
SHIM_SLOT(mi_dupenv_s);

SHIM_EXPORT char *mi_strdup(const char *s)
{
    struct mi_args x = MI(mi_strdup, P0, .p = (void *)s);
    if (s == NULL)
        return forward(&x);
    return shim_alloc(QAUDIT_mi_strings, QAUDIT_AS_MALLOC, strlen(s) + 1, true, forward, &x);
}

SHIM_EXPORT char *mi_strndup(const char *s, size_t n)
{
    struct mi_args x = MI(mi_strndup, P1, .p = (void *)s, .a = n);
    if (s == NULL)
        return forward(&x);
    return shim_alloc(QAUDIT_mi_strings, QAUDIT_AS_MALLOC, strnlen(s, n) + 1, true, forward, &x);
}

SHIM_EXPORT unsigned char *mi_mbsdup(const unsigned char *s)
{
    struct mi_args x = MI(mi_mbsdup, P0, .p = (void *)s);
    if (s == NULL)
        return forward(&x);
    return shim_alloc(QAUDIT_mi_strings, QAUDIT_AS_MALLOC, strlen((const char *)s) + 1, true,
                      forward, &x);
}

SHIM_EXPORT unsigned short *mi_wcsdup(const unsigned short *s)
{
    struct mi_args x = MI(mi_wcsdup, P0, .p = (void *)s);
    if (s == NULL)
        return forward(&x);
    size_t n = 0;
    while (s[n] != 0)
        n++;
    return shim_alloc(QAUDIT_mi_strings, QAUDIT_AS_MALLOC, (n + 1) * sizeof *s, true, forward, &x);
}

SHIM_EXPORT char *mi_realpath(const char *name, char *resolved)
{
    struct mi_args x = MI(mi_realpath, PP0, .h = (void *)name, .p = resolved);
    if (resolved != NULL)
        return forward(&x);
    char path[4096];
    x.p = path;
    if (forward(&x) == NULL)
        return NULL;
    return mi_strdup(path);
}

struct dupenv_args {
    char **buf;
    size_t *size;
    const char *name;
    int error;
};

static void *forward_dupenv(void *args)
{
    struct dupenv_args *a = args;
    __typeof__(&mi_dupenv_s) f = NEXT(mi_dupenv_s);
    a->error = f ? f(a->buf, a->size, a->name) : EINVAL;
    return a->error == 0 ? *a->buf : NULL;
}

SHIM_EXPORT int mi_dupenv_s(char **buf, size_t *size, const char *name)
{
    struct dupenv_args a = {buf, size, name, EINVAL};
    const char *value = buf && name ? getenv(name) : NULL;
    if (value == NULL)
        forward_dupenv(&a);
    else
        shim_alloc(QAUDIT_mi_strings, QAUDIT_AS_MALLOC, strlen(value) + 1, true, forward_dupenv,
                   &a);
    return a.error;
}

/* The C++ helpers, counted through their nothrow forms (an exception must not cross the
 * preload's frames); when those fail, the throwing form throws outside the preload. */
void *mi_new(size_t size);
void *mi_new_aligned(size_t size, size_t align);
void *mi_new_n(size_t n, size_t size);
void *mi_new_realloc(void *p, size_t size);
void *mi_new_reallocn(void *p, size_t n, size_t size);
SHIM_SLOT(mi_new);
SHIM_SLOT(mi_new_aligned);
SHIM_SLOT(mi_new_n);
SHIM_SLOT(mi_new_realloc);
SHIM_SLOT(mi_new_reallocn);

SHIM_EXPORT void *mi_new(size_t size)
{
    struct mi_args x = MI(mi_new_nothrow, A1, .a = size);
    void *p = shim_alloc(QAUDIT_mi_new, QAUDIT_AS_MALLOC, size, false, forward, &x);
    if (p == NULL) {
        struct mi_args t = MI(mi_new, A1, .a = size);
        p = forward(&t);
    }
    return p;
}

SHIM_EXPORT void *mi_new_aligned(size_t size, size_t align)
{
    struct mi_args x = MI(mi_new_aligned_nothrow, A2, .a = size, .b = align);
    void *p = shim_alloc(QAUDIT_mi_new, QAUDIT_AS_ALIGNED_ALLOC, size, false, forward, &x);
    if (p == NULL) {
        struct mi_args t = MI(mi_new_aligned, A2, .a = size, .b = align);
        p = forward(&t);
    }
    return p;
}

SHIM_EXPORT void *mi_new_n(size_t n, size_t size)
{
    size_t bytes;
    struct mi_args t = MI(mi_new_n, A2, .a = n, .b = size);
    if (!shim_product(n, size, &bytes))
        return forward(&t); /* throws */
    struct mi_args x = MI(mi_new_nothrow, A1, .a = bytes);
    void *p = shim_alloc(QAUDIT_mi_new, QAUDIT_AS_MALLOC, bytes, false, forward, &x);
    return p ? p : forward(&t);
}

SHIM_EXPORT void *mi_new_realloc(void *p, size_t size)
{
    struct mi_args x = MI(mi_realloc, P1, .p = p, .a = size);
    void *q = resize(QAUDIT_mi_new, QAUDIT_AS_MALLOC, p, size, false, &x);
    if (q == NULL) {
        struct mi_args t = MI(mi_new_realloc, P1, .p = p, .a = size);
        q = forward(&t);
    }
    return q;
}

SHIM_EXPORT void *mi_new_reallocn(void *p, size_t n, size_t size)
{
    size_t bytes;
    struct mi_args t = MI(mi_new_reallocn, P2, .p = p, .a = n, .b = size);
    if (!shim_product(n, size, &bytes))
        return forward(&t); /* throws */
    struct mi_args x = MI(mi_realloc, P1, .p = p, .a = bytes);
    void *q = resize(QAUDIT_mi_new, QAUDIT_AS_MALLOC, p, bytes, false, &x);
    return q ? q : forward(&t);
}

/* mi_heap_*: the same calls in a given heap (h). */
char *mi_heap_strdup(void *h, const char *s);
char *mi_heap_strndup(void *h, const char *s, size_t n);
char *mi_heap_realpath(void *h, const char *name, char *resolved);
void *mi_heap_alloc_new(void *h, size_t size);
void *mi_heap_alloc_new_n(void *h, size_t n, size_t size);
SHIM_SLOT(mi_heap_strdup);
SHIM_SLOT(mi_heap_strndup);
SHIM_SLOT(mi_heap_realpath);
SHIM_SLOT(mi_heap_alloc_new);
SHIM_SLOT(mi_heap_alloc_new_n);

SHIM_EXPORT char *mi_heap_strdup(void *h, const char *s)
{
    struct mi_args x = MI(mi_heap_strdup, PP0, .h = h, .p = (void *)s);
    if (s == NULL)
        return forward(&x);
    return shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_MALLOC, strlen(s) + 1, true, forward, &x);
}

SHIM_EXPORT char *mi_heap_strndup(void *h, const char *s, size_t n)
{
    struct mi_args x = MI(mi_heap_strndup, PP1, .h = h, .p = (void *)s, .a = n);
    if (s == NULL)
        return forward(&x);
    return shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_MALLOC, strnlen(s, n) + 1, true, forward, &x);
}

SHIM_EXPORT char *mi_heap_realpath(void *h, const char *name, char *resolved)
{
    if (resolved != NULL) {
        __typeof__(&mi_heap_realpath) f = NEXT(mi_heap_realpath);
        return f ? f(h, name, resolved) : shim_missing();
    }
    char path[4096];
    if (mi_heap_realpath(h, name, path) == NULL)
        return NULL;
    return mi_heap_strdup(h, path);
}

SHIM_EXPORT void *mi_heap_alloc_new(void *h, size_t size)
{
    struct mi_args x = MI(mi_heap_malloc, P1, .p = h, .a = size);
    void *p = shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_MALLOC, size, false, forward, &x);
    if (p == NULL) {
        struct mi_args t = MI(mi_heap_alloc_new, P1, .p = h, .a = size);
        p = forward(&t); /* throws */
    }
    return p;
}

SHIM_EXPORT void *mi_heap_alloc_new_n(void *h, size_t n, size_t size)
{
    size_t bytes;
    struct mi_args t = MI(mi_heap_alloc_new_n, P2, .p = h, .a = n, .b = size);
    if (!shim_product(n, size, &bytes))
        return forward(&t); /* throws */
    struct mi_args x = MI(mi_heap_malloc, P1, .p = h, .a = bytes);
    void *p = shim_alloc(QAUDIT_mi_heap_alloc, QAUDIT_AS_MALLOC, bytes, false, forward, &x);
    return p ? p : forward(&t);
}

void *mi_heap_reallocf(void *h, void *p, size_t size);

SHIM_EXPORT void *mi_heap_reallocf(void *h, void *p, size_t size)
{
    struct mi_args x = MI(mi_heap_realloc, PP1, .h = h, .p = p, .a = size);
    void *q = resize(QAUDIT_mi_heap_realloc, QAUDIT_AS_MALLOC, p, size, false, &x);
    if (q == NULL && p != NULL) {
        struct mi_args f = MI(mi_free, F0, .p = p);
        free_counted(QAUDIT_mi_free, &f);
    }
    return q;
}

/* mi_heap_destroy frees every block of a heap at once, without a free per block: each block the
 * heap holds is counted as freed first. mimalloc destroys only heaps made by mi_heap_new (the
 * backing heap is kept, and its blocks with it). The heap's own bookkeeping is freed by mi_free,
 * counted there, as its allocation by mi_heap_new was counted at mi_heap_malloc. */
typedef bool visit_fn(const void *heap, const void *area, void *block, size_t size, void *arg);
void mi_heap_destroy(void *h);
void *mi_heap_get_backing(void);
bool mi_heap_visit_blocks(const void *h, bool all_blocks, visit_fn *visitor, void *arg);
SHIM_SLOT(mi_heap_destroy);
SHIM_SLOT(mi_heap_get_backing);
SHIM_SLOT(mi_heap_visit_blocks);

static bool count_freed(const void *heap, const void *area, void *block, size_t size, void *arg)
{
    (void)heap, (void)area, (void)size, (void)arg;
    if (block != NULL)
        shim_free(QAUDIT_MAX_ENTRIES, block, NULL, NULL); /* counted, not forwarded */
    return true;
}

SHIM_EXPORT void mi_heap_destroy(void *h)
{
    __typeof__(&mi_heap_get_backing) backing = NEXT(mi_heap_get_backing);
    __typeof__(&mi_heap_visit_blocks) visit = NEXT(mi_heap_visit_blocks);
    __typeof__(&mi_heap_destroy) destroy = NEXT(mi_heap_destroy);
    if (h != NULL && backing != NULL && visit != NULL && h != backing()) {
        shim_note(QAUDIT_mi_heap_destroy);
        visit(h, true, count_freed, NULL);
    }
    if (destroy)
        destroy(h);
}
