/* libqaudit-tcmalloc.so: tcmalloc's own entry points (tc_malloc, tc_free, tc_calloc, tc_realloc,
 * the aligned family, tc_new/tc_delete and their array, nothrow, sized and aligned forms, and the
 * C++ operators in shim.c), counted by libqaudit-preload.so as the malloc family and forwarded
 * to tcmalloc. Preloaded right after libqaudit-preload.so and only where tcmalloc is loaded.
 * tc_malloc_size, tc_nallocx and the statistics calls allocate nothing and are left to it. */
#include "shim.h"

const unsigned shim_family = QAUDIT_TCMALLOC;
SHIM_EXPORT const char __qaudit_shim_v1[] = "tcmalloc";

/* tcmalloc's entry points, one line each, as mimalloc.c's (mimalloc's own alloc-override.c is
 * the model): each line declares the entry point and its slot for the next definition
 * (TC_DECLARE_*) and defines the exported wrapper (TC_DEFINE_*), which only gathers its arguments
 * and makes the counted call. The allocations: X(name, (parameters), (arguments for the forward),
 * entry, counted as). */
#define TC_ALLOCS(X)                                                                               \
    X(tc_malloc, (size_t size), (.size = size, .which = MALLOC), QAUDIT_tc_malloc,                 \
      QAUDIT_AS_MALLOC)                                                                            \
    X(tc_malloc_skip_new_handler, (size_t size), (.size = size, .which = SKIP_NEW_HANDLER),        \
      QAUDIT_tc_malloc_skip_new_handler, QAUDIT_AS_MALLOC)                                         \
    X(tc_memalign, (size_t align, size_t size), (.size = size, .align = align, .which = MEMALIGN), \
      QAUDIT_tc_memalign, QAUDIT_AS_MEMALIGN)                                                      \
    X(tc_valloc, (size_t size), (.size = size, .which = VALLOC), QAUDIT_tc_valloc,                 \
      QAUDIT_AS_VALLOC)                                                                            \
    X(tc_pvalloc, (size_t size), (.size = size, .which = PVALLOC), QAUDIT_tc_pvalloc,              \
      QAUDIT_AS_PVALLOC)

/* The frees: X(name, (parameters), size, which form, entry). */
#define TC_FREES(X)                                                                                \
    X(tc_free, (void *ptr), 0, FREE, QAUDIT_tc_free)                                               \
    X(tc_free_sized, (void *ptr, size_t size), size, FREE_SIZED, QAUDIT_tc_free_sized)             \
    X(tc_cfree, (void *ptr), 0, CFREE, QAUDIT_tc_cfree)

/* tc_new and tc_newarray, every form: X(name, (parameters), alignment, array, aligned,
 * nothrow). */
#define TAG const void *tag __attribute__((unused)) /* std::nothrow */
#define TC_NEWS(X)                                                                                 \
    X(tc_new, (size_t size), 0, false, false, false)                                               \
    X(tc_newarray, (size_t size), 0, true, false, false)                                           \
    X(tc_new_aligned, (size_t size, size_t align), align, false, true, false)                      \
    X(tc_newarray_aligned, (size_t size, size_t align), align, true, true, false)                  \
    X(tc_new_nothrow, (size_t size, TAG), 0, false, false, true)                                   \
    X(tc_newarray_nothrow, (size_t size, TAG), 0, true, false, true)                               \
    X(tc_new_aligned_nothrow, (size_t size, size_t align, TAG), align, false, true, true)          \
    X(tc_newarray_aligned_nothrow, (size_t size, size_t align, TAG), align, true, true, true)

/* tc_delete and tc_deletearray, every form: X(name, (parameters), size, alignment, form,
 * array). */
#define TC_DELETES(X)                                                                              \
    X(tc_delete, (void *p), 0, 0, PLAIN, false)                                                    \
    X(tc_deletearray, (void *p), 0, 0, PLAIN, true)                                                \
    X(tc_delete_sized, (void *p, size_t size), size, 0, SIZED, false)                              \
    X(tc_deletearray_sized, (void *p, size_t size), size, 0, SIZED, true)                          \
    X(tc_delete_aligned, (void *p, size_t align), 0, align, ALIGNED, false)                        \
    X(tc_deletearray_aligned, (void *p, size_t align), 0, align, ALIGNED, true)                    \
    X(tc_delete_sized_aligned, (void *p, size_t size, size_t align), size, align, SIZED_ALIGNED,   \
      false)                                                                                       \
    X(tc_deletearray_sized_aligned, (void *p, size_t size, size_t align), size, align,             \
      SIZED_ALIGNED, true)                                                                         \
    X(tc_delete_nothrow, (void *p, TAG), 0, 0, NOTHROW, false)                                     \
    X(tc_deletearray_nothrow, (void *p, TAG), 0, 0, NOTHROW, true)                                 \
    X(tc_delete_aligned_nothrow, (void *p, size_t align, TAG), 0, align, ALIGNED_NOTHROW, false)   \
    X(tc_deletearray_aligned_nothrow, (void *p, size_t align, TAG), 0, align, ALIGNED_NOTHROW, true)

#define TC_UNPAREN(...) __VA_ARGS__
#define TC_DECLARE_ALLOC(name, params, init, entry, as)                                            \
    void *name params;                                                                             \
    SHIM_SLOT(name);
#define TC_DECLARE_FREE(name, params, size, which, entry)                                          \
    void name params;                                                                              \
    SHIM_SLOT(name);
#define TC_DECLARE_NEW(name, params, align, array, aligned, nothrow)                               \
    void *name params;                                                                             \
    SHIM_SLOT(name);
#define TC_DECLARE_DELETE(name, params, size, align, form, array)                                  \
    void name params;                                                                              \
    SHIM_SLOT(name);

TC_ALLOCS(TC_DECLARE_ALLOC)
TC_FREES(TC_DECLARE_FREE)
TC_NEWS(TC_DECLARE_NEW)
TC_DELETES(TC_DECLARE_DELETE)

/* Written out below the tables: tc_calloc (an overflowing product), tc_posix_memalign (a
 * status) and tc_realloc (an allocation, a free or a resize). */
void *tc_calloc(size_t n, size_t size);
void *tc_realloc(void *ptr, size_t size);
int tc_posix_memalign(void **out, size_t align, size_t size);
SHIM_SLOT(tc_calloc);
SHIM_SLOT(tc_realloc);
SHIM_SLOT(tc_posix_memalign);

/* Every entry point's arguments; `which` names the function a shared forward calls. */
struct tc_args {
    void *ptr;
    size_t n, size, align;
    int which, error;
    bool called;
};

enum { MALLOC, SKIP_NEW_HANDLER, MEMALIGN, VALLOC, PVALLOC, FREE, FREE_SIZED, CFREE };

static void *forward_alloc(void *args)
{
    struct tc_args *a = args;
    __typeof__(&tc_malloc) one = NULL;
    __typeof__(&tc_memalign) two;
    switch (a->which) {
    case MALLOC:
        one = NEXT(tc_malloc);
        break;
    case SKIP_NEW_HANDLER:
        one = NEXT(tc_malloc_skip_new_handler);
        break;
    case VALLOC:
        one = NEXT(tc_valloc);
        break;
    case PVALLOC:
        one = NEXT(tc_pvalloc);
        break;
    default: /* MEMALIGN */
        two = NEXT(tc_memalign);
        return two ? two(a->align, a->size) : shim_missing();
    }
    return one ? one(a->size) : shim_missing();
}

static void *forward_free(void *args)
{
    struct tc_args *a = args;
    __typeof__(&tc_free) one = NULL;
    __typeof__(&tc_free_sized) sized;
    switch (a->which) {
    case FREE_SIZED:
        if ((sized = NEXT(tc_free_sized)))
            sized(a->ptr, a->size);
        return NULL;
    case CFREE:
        one = NEXT(tc_cfree);
        break;
    default:
        one = NEXT(tc_free);
    }
    if (one)
        one(a->ptr);
    return NULL;
}

static inline __attribute__((always_inline)) void free_counted(unsigned entry, void *ptr,
                                                               size_t size, int which)
{
    if (ptr == NULL)
        return; /* freeing a null pointer does nothing */
    struct tc_args a = {.ptr = ptr, .size = size, .which = which};
    shim_free(entry, ptr, forward_free, &a);
}

/* tc_new and tc_newarray, every form, counted through their nothrow forms (an exception must not
 * cross the preload's frames); when those fail, the throwing form throws outside the preload. */
static const char nothrow_tag;

struct tc_new_args {
    size_t size, align;
    bool array, aligned;
};

static void *forward_new(void *args)
{
    struct tc_new_args *a = args;
    if (a->aligned) {
        __typeof__(&tc_new_aligned_nothrow) f =
            a->array ? NEXT(tc_newarray_aligned_nothrow) : NEXT(tc_new_aligned_nothrow);
        return f ? f(a->size, a->align, &nothrow_tag) : shim_missing();
    }
    __typeof__(&tc_new_nothrow) f = a->array ? NEXT(tc_newarray_nothrow) : NEXT(tc_new_nothrow);
    return f ? f(a->size, &nothrow_tag) : shim_missing();
}

static void *throwing_new(const struct tc_new_args *a)
{
    if (a->aligned) {
        __typeof__(&tc_new_aligned) f = a->array ? NEXT(tc_newarray_aligned) : NEXT(tc_new_aligned);
        return f ? f(a->size, a->align) : shim_missing();
    }
    __typeof__(&tc_new) f = a->array ? NEXT(tc_newarray) : NEXT(tc_new);
    return f ? f(a->size) : shim_missing();
}

static inline __attribute__((always_inline)) void *
new_counted(size_t size, size_t align, bool array, bool aligned, bool nothrow)
{
    struct tc_new_args a = {size, align, array, aligned};
    void *p = shim_alloc(array ? QAUDIT_tc_newarray : QAUDIT_tc_new,
                         aligned ? QAUDIT_AS_ALIGNED_ALLOC : QAUDIT_AS_MALLOC, size, nothrow,
                         forward_new, &a);
    if (p == NULL && !nothrow)
        p = throwing_new(&a);
    return p;
}

/* tc_delete and tc_deletearray, every form: counted as a free, forwarded to the same form. */
enum delete_form { PLAIN, SIZED, ALIGNED, SIZED_ALIGNED, NOTHROW, ALIGNED_NOTHROW };
struct tc_delete_args {
    void *p;
    size_t size, align;
    enum delete_form form;
    bool array;
};

static void *forward_delete(void *args)
{
    struct tc_delete_args *a = args;
    __typeof__(&tc_delete) plain;
    __typeof__(&tc_delete_sized) two;
    __typeof__(&tc_delete_sized_aligned) three;
    __typeof__(&tc_delete_nothrow) nothrow;
    __typeof__(&tc_delete_aligned_nothrow) aligned_nothrow;
    switch (a->form) {
    case PLAIN:
        if ((plain = a->array ? NEXT(tc_deletearray) : NEXT(tc_delete)))
            plain(a->p);
        break;
    case SIZED:
        if ((two = a->array ? NEXT(tc_deletearray_sized) : NEXT(tc_delete_sized)))
            two(a->p, a->size);
        break;
    case ALIGNED:
        if ((two = a->array ? NEXT(tc_deletearray_aligned) : NEXT(tc_delete_aligned)))
            two(a->p, a->align);
        break;
    case SIZED_ALIGNED:
        if ((three = a->array ? NEXT(tc_deletearray_sized_aligned) : NEXT(tc_delete_sized_aligned)))
            three(a->p, a->size, a->align);
        break;
    case NOTHROW:
        if ((nothrow = a->array ? NEXT(tc_deletearray_nothrow) : NEXT(tc_delete_nothrow)))
            nothrow(a->p, &nothrow_tag);
        break;
    case ALIGNED_NOTHROW:
        aligned_nothrow =
            a->array ? NEXT(tc_deletearray_aligned_nothrow) : NEXT(tc_delete_aligned_nothrow);
        if (aligned_nothrow)
            aligned_nothrow(a->p, a->align, &nothrow_tag);
        break;
    }
    return NULL;
}

static inline __attribute__((always_inline)) void delete_counted(void *p, size_t size, size_t align,
                                                                 enum delete_form form, bool array)
{
    if (p == NULL)
        return;
    struct tc_delete_args a = {p, size, align, form, array};
    shim_free(array ? QAUDIT_tc_deletearray : QAUDIT_tc_delete, p, forward_delete, &a);
}

#define TC_DEFINE_ALLOC(name, params, init, entry, as)                                             \
    SHIM_EXPORT void *name params                                                                  \
    {                                                                                              \
        struct tc_args a = {TC_UNPAREN init};                                                      \
        return shim_alloc(entry, as, size, true, forward_alloc, &a);                               \
    }
#define TC_DEFINE_FREE(name, params, size, which, entry)                                           \
    SHIM_EXPORT void name params                                                                   \
    {                                                                                              \
        free_counted(entry, ptr, size, which);                                                     \
    }
#define TC_DEFINE_NEW(name, params, align, array, aligned, nothrow)                                \
    SHIM_EXPORT void *name params                                                                  \
    {                                                                                              \
        return new_counted(size, align, array, aligned, nothrow);                                  \
    }
#define TC_DEFINE_DELETE(name, params, size, align, form, array)                                   \
    SHIM_EXPORT void name params                                                                   \
    {                                                                                              \
        delete_counted(p, size, align, form, array);                                               \
    }

TC_ALLOCS(TC_DEFINE_ALLOC)
TC_FREES(TC_DEFINE_FREE)
TC_NEWS(TC_DEFINE_NEW)
TC_DELETES(TC_DEFINE_DELETE)

static void *forward_calloc(void *args)
{
    struct tc_args *a = args;
    __typeof__(&tc_calloc) f = NEXT(tc_calloc);
    return f ? f(a->n, a->size) : shim_missing();
}

SHIM_EXPORT void *tc_calloc(size_t n, size_t size)
{
    struct tc_args a = {.n = n, .size = size};
    size_t bytes;
    if (!shim_product(n, size, &bytes))
        return forward_calloc(&a);
    return shim_alloc(QAUDIT_tc_calloc, QAUDIT_AS_CALLOC, bytes, true, forward_calloc, &a);
}

static void *forward_posix_memalign(void *args)
{
    struct tc_args *a = args;
    __typeof__(&tc_posix_memalign) f = NEXT(tc_posix_memalign);
    void *p = NULL;
    a->called = true;
    a->error = f ? f(&p, a->align, a->size) : ENOMEM;
    return a->error == 0 ? p : NULL;
}

SHIM_EXPORT int tc_posix_memalign(void **out, size_t align, size_t size)
{
    struct tc_args a = {.size = size, .align = align};
    void *p = shim_alloc(QAUDIT_tc_posix_memalign, QAUDIT_AS_POSIX_MEMALIGN, size, true,
                         forward_posix_memalign, &a);
    if (p == NULL)
        return a.called ? a.error : ENOMEM;
    *out = p;
    return 0;
}

static void *forward_realloc(void *args)
{
    struct tc_args *a = args;
    __typeof__(&tc_realloc) f = NEXT(tc_realloc);
    return f ? f(a->ptr, a->size) : shim_missing();
}

/* As tcmalloc does it: tc_realloc(NULL, n) allocates, tc_realloc(p, 0) frees. */
SHIM_EXPORT void *tc_realloc(void *ptr, size_t size)
{
    struct tc_args a = {.ptr = ptr, .size = size};
    if (ptr == NULL)
        return shim_alloc(QAUDIT_tc_realloc, QAUDIT_AS_MALLOC, size, true, forward_realloc, &a);
    if (size == 0) {
        shim_free(QAUDIT_tc_realloc, ptr, forward_realloc, &a);
        return NULL;
    }
    return shim_resize(QAUDIT_tc_realloc, QAUDIT_AS_REALLOC, ptr, size, false, forward_realloc, &a);
}
