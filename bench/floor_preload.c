/* The cheapest interposers that could count, to measure what any interposer costs on this
 * machine before qaudit does anything: one thread-local counter per call (the "bare counting
 * interposer" of issue 4), and, built with FLOOR_USABLE, also the two malloc_usable_size calls
 * that exact usable and live bytes need. Only malloc and free are replaced: malloc_bench calls
 * nothing else. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);
#ifdef FLOOR_USABLE
static size_t (*next_usable_size)(void *);
#endif

static __thread uint64_t calls __attribute__((tls_model("initial-exec")));
#ifdef FLOOR_USABLE
static __thread uint64_t usable_bytes __attribute__((tls_model("initial-exec")));
#endif

/* glibc's dlsym does not allocate when the symbol exists, so no bootstrap arena is needed here.
 * Every result is stored and used: dlsym(RTLD_NEXT) finds "next" from its return address, and
 * a call whose result went unused would become a tail call made, as far as dlsym can tell, from
 * the loader. */
__attribute__((constructor)) static void resolve(void)
{
    next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
#ifdef FLOOR_USABLE
    next_usable_size = (size_t(*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
#endif
}

__attribute__((visibility("default"))) void *malloc(size_t size)
{
    void *p = next_malloc(size);
    calls++;
#ifdef FLOOR_USABLE
    usable_bytes += next_usable_size(p);
#endif
    return p;
}

__attribute__((visibility("default"))) void free(void *p)
{
    calls++;
#ifdef FLOOR_USABLE
    if (p != NULL)
        usable_bytes -= next_usable_size(p);
#endif
    next_free(p);
}
