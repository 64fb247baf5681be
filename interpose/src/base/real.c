/* The next allocator in link order (glibc's, or jemalloc/tcmalloc/mimalloc when those come
 * after the preload), resolved once with dlsym(RTLD_NEXT) at start-up. Context: start-up; the
 * table is then read by every call. */
#include <dlfcn.h>

#include "base.h"

bool qa_real_resolve(void)
{
    qa_real.read_fn = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
    qa_real.syscall_fn = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    qa_real.malloc_fn = dlsym(RTLD_NEXT, "malloc");
    qa_real.free_fn = dlsym(RTLD_NEXT, "free");
    qa_real.calloc_fn = dlsym(RTLD_NEXT, "calloc");
    qa_real.realloc_fn = dlsym(RTLD_NEXT, "realloc");
    qa_real.reallocarray_fn = dlsym(RTLD_NEXT, "reallocarray");
    qa_real.posix_memalign_fn = dlsym(RTLD_NEXT, "posix_memalign");
    qa_real.aligned_alloc_fn = dlsym(RTLD_NEXT, "aligned_alloc");
    qa_real.memalign_fn = dlsym(RTLD_NEXT, "memalign");
    qa_real.valloc_fn = dlsym(RTLD_NEXT, "valloc");
    qa_real.pvalloc_fn = dlsym(RTLD_NEXT, "pvalloc");
    qa_real.usable_size_fn = dlsym(RTLD_NEXT, "malloc_usable_size");
    return qa_real.malloc_fn != NULL && qa_real.free_fn != NULL && qa_real.calloc_fn != NULL &&
           qa_real.realloc_fn != NULL && qa_real.read_fn != NULL && qa_real.syscall_fn != NULL;
}
