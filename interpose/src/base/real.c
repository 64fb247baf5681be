/* The next allocator in link order (glibc's, or jemalloc/tcmalloc/mimalloc when those come
 * after the preload), resolved once with dlsym(RTLD_NEXT) at start-up; after qaudit attach, the
 * one the program itself reaches (RTLD_DEFAULT: the preload was loaded last); with it the C
 * library's read and syscall and the loader's dlopen and dlclose, which the interposer's own code
 * calls instead of the exported names (the preload's own interposers when preloaded). Context:
 * start-up; the table is then read by every call. */
#include <dlfcn.h>

#include "base.h"

bool qa_real_resolve(bool attached)
{
    void *from = attached ? RTLD_DEFAULT : RTLD_NEXT;
    qa_real.read_fn = (ssize_t(*)(int, void *, size_t))dlsym(from, "read");
    qa_real.syscall_fn = (long (*)(long, ...))dlsym(from, "syscall");
    qa_real.dlopen_fn = (void *(*)(const char *, int))dlsym(from, "dlopen");
    qa_real.dlclose_fn = (int (*)(void *))dlsym(from, "dlclose");
    qa_real.malloc_fn = dlsym(from, "malloc");
    qa_real.free_fn = dlsym(from, "free");
    qa_real.calloc_fn = dlsym(from, "calloc");
    qa_real.realloc_fn = dlsym(from, "realloc");
    qa_real.reallocarray_fn = dlsym(from, "reallocarray");
    qa_real.posix_memalign_fn = dlsym(from, "posix_memalign");
    qa_real.aligned_alloc_fn = dlsym(from, "aligned_alloc");
    qa_real.memalign_fn = dlsym(from, "memalign");
    qa_real.valloc_fn = dlsym(from, "valloc");
    qa_real.pvalloc_fn = dlsym(from, "pvalloc");
    qa_real.usable_size_fn = dlsym(from, "malloc_usable_size");
    return qa_real.malloc_fn != NULL && qa_real.free_fn != NULL && qa_real.calloc_fn != NULL &&
           qa_real.realloc_fn != NULL && qa_real.read_fn != NULL && qa_real.syscall_fn != NULL;
}

/* libgcc's unwinder (linked in from libgcc_eh.a, records/stacks.c) allocates only for frames
 * registered with its own hidden copy of __register_frame, which nothing does. Its references
 * to malloc, calloc, realloc and free are renamed to these at build time (interpose/
 * CMakeLists.txt), so that even those never bind to the preload's own exported malloc family. */
void *qa_unwinder_malloc(size_t size);
void *qa_unwinder_calloc(size_t n, size_t size);
void *qa_unwinder_realloc(void *p, size_t size);
void qa_unwinder_free(void *p);

void *qa_unwinder_malloc(size_t size)
{
    return qa_real.malloc_fn ? qa_real.malloc_fn(size) : NULL;
}

void *qa_unwinder_calloc(size_t n, size_t size)
{
    return qa_real.calloc_fn ? qa_real.calloc_fn(n, size) : NULL;
}

void *qa_unwinder_realloc(void *p, size_t size)
{
    return qa_real.realloc_fn ? qa_real.realloc_fn(p, size) : NULL;
}

void qa_unwinder_free(void *p)
{
    if (qa_real.free_fn)
        qa_real.free_fn(p);
}
