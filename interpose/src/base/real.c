/* The next allocator in link order (glibc's, or jemalloc/tcmalloc/mimalloc when those come
 * after the preload), resolved once with dlsym(RTLD_NEXT) at start-up. Context: start-up; the
 * table is then read by every call. */
#include <dlfcn.h>

#include "base.h"

struct qa_real_allocator qa_real;

bool qa_real_resolve(void)
{
    qa_real.malloc = dlsym(RTLD_NEXT, "malloc");
    qa_real.free = dlsym(RTLD_NEXT, "free");
    qa_real.calloc = dlsym(RTLD_NEXT, "calloc");
    qa_real.realloc = dlsym(RTLD_NEXT, "realloc");
    qa_real.reallocarray = dlsym(RTLD_NEXT, "reallocarray");
    qa_real.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    qa_real.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    qa_real.memalign = dlsym(RTLD_NEXT, "memalign");
    qa_real.valloc = dlsym(RTLD_NEXT, "valloc");
    qa_real.pvalloc = dlsym(RTLD_NEXT, "pvalloc");
    qa_real.malloc_usable_size = dlsym(RTLD_NEXT, "malloc_usable_size");
    return qa_real.malloc != NULL && qa_real.free != NULL && qa_real.calloc != NULL &&
           qa_real.realloc != NULL;
}

size_t qa_real_usable_size(void *p)
{
    return qa_real.malloc_usable_size ? qa_real.malloc_usable_size(p) : 0;
}
