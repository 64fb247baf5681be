/* What every allocator shim shares: finding the allocator's own functions, and the C++
 * operators. jemalloc, tcmalloc and mimalloc all define operator new and delete, so a C++
 * program's new and delete reach them without passing malloc; the shim counts every form. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

#define MISSING ((void *)1) /* a slot whose symbol was looked for and is not there */

static void say_missing(const char *name)
{
    static atomic_int said;
    if (atomic_exchange(&said, 1))
        return;
    static const char a[] = "qaudit: a qaudit allocator shim is preloaded but nothing after it "
                            "defines ";
    static const char b[] = ": take the shim out of LD_PRELOAD (it belongs right after "
                            "libqaudit-preload.so and before its allocator)\n";
    (void)!write(STDERR_FILENO, a, sizeof a - 1);
    (void)!write(STDERR_FILENO, name, strlen(name));
    (void)!write(STDERR_FILENO, b, sizeof b - 1);
}

void *shim_next(_Atomic(void *) *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (f == NULL) {
        /* dlsym must be called from this object: RTLD_NEXT means "after the caller's object". */
        f = dlsym(RTLD_NEXT, name);
        if (f == NULL) {
            say_missing(name);
            f = MISSING;
        }
        atomic_store_explicit(slot, f, memory_order_release);
    }
    return f == MISSING ? NULL : f;
}

void *shim_missing(void)
{
    errno = ENOMEM;
    return NULL;
}

static void no_runtime(void)
{
    static const char line[] = "qaudit: a C++ operator was called but no C++ runtime or "
                               "allocator defines it\n";
    (void)!write(STDERR_FILENO, line, sizeof line - 1);
    abort();
}

/* operator new, every form, is counted through its nothrow form: an exception must never cross
 * the preload's frames (its re-entrancy guard would stay set). When the nothrow form fails
 * (after the new-handler loop), the throwing form is called outside the preload and throws
 * bad_alloc as it would have. While a nothrow form is being forwarded, the shim's own operators
 * forward at once: libstdc++'s nothrow new calls the throwing one, which would come back here. */
static __thread bool forwarding_new __attribute__((tls_model("initial-exec")));
static const char nothrow_tag; /* std::nothrow_t is empty and passed by reference: never read */

void *_Znwm(size_t size);
void *_Znam(size_t size);
void *_ZnwmSt11align_val_t(size_t size, size_t align);
void *_ZnamSt11align_val_t(size_t size, size_t align);
void *_ZnwmRKSt9nothrow_t(size_t size, const void *tag);
void *_ZnamRKSt9nothrow_t(size_t size, const void *tag);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *tag);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *tag);
SHIM_SLOT(_Znwm);
SHIM_SLOT(_Znam);
SHIM_SLOT(_ZnwmSt11align_val_t);
SHIM_SLOT(_ZnamSt11align_val_t);
SHIM_SLOT(_ZnwmRKSt9nothrow_t);
SHIM_SLOT(_ZnamRKSt9nothrow_t);
SHIM_SLOT(_ZnwmSt11align_val_tRKSt9nothrow_t);
SHIM_SLOT(_ZnamSt11align_val_tRKSt9nothrow_t);

struct new_args {
    size_t size, align;
    bool array, aligned;
};

static void *nothrow_new(const struct new_args *a)
{
    if (a->aligned) {
        __typeof__(&_ZnwmSt11align_val_tRKSt9nothrow_t) f =
            a->array ? NEXT(_ZnamSt11align_val_tRKSt9nothrow_t)
                     : NEXT(_ZnwmSt11align_val_tRKSt9nothrow_t);
        return f ? f(a->size, a->align, &nothrow_tag) : shim_missing();
    }
    __typeof__(&_ZnwmRKSt9nothrow_t) f =
        a->array ? NEXT(_ZnamRKSt9nothrow_t) : NEXT(_ZnwmRKSt9nothrow_t);
    return f ? f(a->size, &nothrow_tag) : shim_missing();
}

static void *forward_new(void *args)
{
    bool was = forwarding_new;
    forwarding_new = true;
    void *p = nothrow_new(args);
    forwarding_new = was;
    return p;
}

static void *throwing_new(size_t size, size_t align, bool array, bool aligned)
{
    if (aligned) {
        __typeof__(&_ZnwmSt11align_val_t) f =
            array ? NEXT(_ZnamSt11align_val_t) : NEXT(_ZnwmSt11align_val_t);
        if (f == NULL)
            no_runtime();
        return f(size, align);
    }
    __typeof__(&_Znwm) f = array ? NEXT(_Znam) : NEXT(_Znwm);
    if (f == NULL)
        no_runtime();
    return f(size);
}

/* The body of every operator new; always inlined, so a stack taken under it holds one shim
 * frame. */
static inline __attribute__((always_inline)) void *
new_counted(size_t size, size_t align, bool array, bool aligned, bool nothrow)
{
    if (forwarding_new) {
        if (!nothrow)
            return throwing_new(size, align, array, aligned);
        struct new_args a = {size, align, array, aligned};
        return nothrow_new(&a);
    }
    struct new_args a = {size, align, array, aligned};
    void *p = shim_alloc(array ? QAUDIT_operator_new_array : QAUDIT_operator_new,
                         aligned ? QAUDIT_AS_ALIGNED_ALLOC : QAUDIT_AS_MALLOC, size, nothrow,
                         forward_new, &a);
    if (p == NULL && !nothrow)
        p = throwing_new(size, align, array, aligned);
    return p;
}

SHIM_EXPORT void *_Znwm(size_t size)
{
    return new_counted(size, 0, false, false, false);
}

SHIM_EXPORT void *_Znam(size_t size)
{
    return new_counted(size, 0, true, false, false);
}

SHIM_EXPORT void *_ZnwmSt11align_val_t(size_t size, size_t align)
{
    return new_counted(size, align, false, true, false);
}

SHIM_EXPORT void *_ZnamSt11align_val_t(size_t size, size_t align)
{
    return new_counted(size, align, true, true, false);
}

SHIM_EXPORT void *_ZnwmRKSt9nothrow_t(size_t size, const void *tag)
{
    (void)tag;
    return new_counted(size, 0, false, false, true);
}

SHIM_EXPORT void *_ZnamRKSt9nothrow_t(size_t size, const void *tag)
{
    (void)tag;
    return new_counted(size, 0, true, false, true);
}

SHIM_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *tag)
{
    (void)tag;
    return new_counted(size, align, false, true, true);
}

SHIM_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *tag)
{
    (void)tag;
    return new_counted(size, align, true, true, true);
}

/* operator delete, every form: counted as a free, then forwarded to the same form. */
void _ZdlPv(void *p);
void _ZdaPv(void *p);
void _ZdlPvm(void *p, size_t size);
void _ZdaPvm(void *p, size_t size);
void _ZdlPvSt11align_val_t(void *p, size_t align);
void _ZdaPvSt11align_val_t(void *p, size_t align);
void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t align);
void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t align);
void _ZdlPvRKSt9nothrow_t(void *p, const void *tag);
void _ZdaPvRKSt9nothrow_t(void *p, const void *tag);
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *tag);
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *tag);
SHIM_SLOT(_ZdlPv);
SHIM_SLOT(_ZdaPv);
SHIM_SLOT(_ZdlPvm);
SHIM_SLOT(_ZdaPvm);
SHIM_SLOT(_ZdlPvSt11align_val_t);
SHIM_SLOT(_ZdaPvSt11align_val_t);
SHIM_SLOT(_ZdlPvmSt11align_val_t);
SHIM_SLOT(_ZdaPvmSt11align_val_t);
SHIM_SLOT(_ZdlPvRKSt9nothrow_t);
SHIM_SLOT(_ZdaPvRKSt9nothrow_t);
SHIM_SLOT(_ZdlPvSt11align_val_tRKSt9nothrow_t);
SHIM_SLOT(_ZdaPvSt11align_val_tRKSt9nothrow_t);

enum delete_form { PLAIN, SIZED, ALIGNED, SIZED_ALIGNED, NOTHROW, ALIGNED_NOTHROW };
struct delete_args {
    void *p;
    size_t size, align;
    enum delete_form form;
    bool array;
};

/* The same form of operator delete or delete[] as the program called. */
static void *forward_delete(void *args)
{
    const struct delete_args *a = args;
    __typeof__(&_ZdlPv) plain;
    __typeof__(&_ZdlPvm) two;
    __typeof__(&_ZdlPvmSt11align_val_t) sized_aligned;
    __typeof__(&_ZdlPvRKSt9nothrow_t) nothrow;
    __typeof__(&_ZdlPvSt11align_val_tRKSt9nothrow_t) aligned_nothrow;
    switch (a->form) {
    case PLAIN:
        if ((plain = a->array ? NEXT(_ZdaPv) : NEXT(_ZdlPv)))
            plain(a->p);
        break;
    case SIZED:
        if ((two = a->array ? NEXT(_ZdaPvm) : NEXT(_ZdlPvm)))
            two(a->p, a->size);
        break;
    case ALIGNED:
        if ((two = a->array ? NEXT(_ZdaPvSt11align_val_t) : NEXT(_ZdlPvSt11align_val_t)))
            two(a->p, a->align);
        break;
    case SIZED_ALIGNED:
        sized_aligned = a->array ? NEXT(_ZdaPvmSt11align_val_t) : NEXT(_ZdlPvmSt11align_val_t);
        if (sized_aligned)
            sized_aligned(a->p, a->size, a->align);
        break;
    case NOTHROW:
        if ((nothrow = a->array ? NEXT(_ZdaPvRKSt9nothrow_t) : NEXT(_ZdlPvRKSt9nothrow_t)))
            nothrow(a->p, &nothrow_tag);
        break;
    case ALIGNED_NOTHROW:
        aligned_nothrow = a->array ? NEXT(_ZdaPvSt11align_val_tRKSt9nothrow_t)
                                   : NEXT(_ZdlPvSt11align_val_tRKSt9nothrow_t);
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
        return; /* deleting a null pointer does nothing */
    struct delete_args a = {p, size, align, form, array};
    shim_free(array ? QAUDIT_operator_delete_array : QAUDIT_operator_delete, p, forward_delete, &a);
}

SHIM_EXPORT void _ZdlPv(void *p)
{
    delete_counted(p, 0, 0, PLAIN, false);
}

SHIM_EXPORT void _ZdaPv(void *p)
{
    delete_counted(p, 0, 0, PLAIN, true);
}

SHIM_EXPORT void _ZdlPvm(void *p, size_t size)
{
    delete_counted(p, size, 0, SIZED, false);
}

SHIM_EXPORT void _ZdaPvm(void *p, size_t size)
{
    delete_counted(p, size, 0, SIZED, true);
}

SHIM_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t align)
{
    delete_counted(p, 0, align, ALIGNED, false);
}

SHIM_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t align)
{
    delete_counted(p, 0, align, ALIGNED, true);
}

SHIM_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t align)
{
    delete_counted(p, size, align, SIZED_ALIGNED, false);
}

SHIM_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t align)
{
    delete_counted(p, size, align, SIZED_ALIGNED, true);
}

SHIM_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *tag)
{
    (void)tag;
    delete_counted(p, 0, 0, NOTHROW, false);
}

SHIM_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *tag)
{
    (void)tag;
    delete_counted(p, 0, 0, NOTHROW, true);
}

SHIM_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *tag)
{
    (void)tag;
    delete_counted(p, 0, align, ALIGNED_NOTHROW, false);
}

SHIM_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *tag)
{
    (void)tag;
    delete_counted(p, 0, align, ALIGNED_NOTHROW, true);
}
