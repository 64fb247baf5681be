/* How many bytes a block really holds. Asking the allocator (malloc_usable_size) at every malloc
 * and free costs more than all the counting together, so when the next allocator is glibc's own
 * and its chunk headers agree with malloc_usable_size on every probe at start-up, the size is
 * read from the header instead (qa_usable_size in base.h).
 * Context: qa_usable_choose at start-up, before counting starts; the inline reader in base.h
 * on every call, the fast path included (no lock, no system call). */
#include <dlfcn.h>
#include <gnu/libc-version.h>

#include "base.h"

/* The shared object an address lies in, or NULL. dladdr does not allocate. */
static const void *object_of(const void *address)
{
    Dl_info info;
    if (address == NULL || dladdr(address, &info) == 0)
        return NULL;
    return info.dli_fbase;
}

/* The largest request glibc's per-thread cache (tcache) keeps a freed block of. */
#define TCACHE_LARGEST 1032

/* Blocks of each kind glibc makes: tiny, small, large, aligned, and one big enough to be
 * mmap'd at the default threshold. Each must agree with the allocator's own answer.
 * The probe leaves the heap as a program finds it natively: a block freed here that the tcache
 * keeps is the program's next one of that size, so the aligned ones (a page apart, each carved
 * where a page starts) are probed only at sizes the tcache does not keep; freed, they go back
 * to the heap's top. Kept, a forked child's first small blocks lay over four pages instead of
 * one, every fork writing three more (bench/RESULTS.md, "Fork + exit: a child's faults
 * counted"). A chunk's header is read the same way whatever its size (globals.h). */
static bool header_agrees(const struct qa_usable_probe *next)
{
    static const size_t sizes[] = {0, 1, 24, 25, 100, 1000, 5000, 70000, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int aligned = 0; aligned < 2; aligned++) {
            if (aligned && sizes[i] <= TCACHE_LARGEST)
                continue;
            void *p = aligned ? next->memalign_fn(4096, sizes[i]) : next->malloc_fn(sizes[i]);
            if (p == NULL)
                return false;
            bool same = qa_glibc_chunk_usable(p) == next->usable_size_fn(p);
            next->free_fn(p);
            if (!same)
                return false;
        }
    }
    return true;
}

void qa_usable_choose(const struct qa_usable_probe *next)
{
    qa_usable_from_header = false;
#if defined(__GLIBC__) && defined(__x86_64__)
    const void *glibc = object_of((const void *)gnu_get_libc_version);
    if (next->usable_size_fn == NULL || next->memalign_fn == NULL || glibc == NULL)
        return;
    if (object_of((const void *)next->malloc_fn) != glibc ||
        object_of((const void *)next->free_fn) != glibc ||
        object_of((const void *)next->usable_size_fn) != glibc)
        return;
    qa_usable_from_header = header_agrees(next);
#else
    (void)next;
#endif
}

const char *qa_usable_source(void)
{
    return qa_usable_from_header ? "glibc_chunk_header" : "malloc_usable_size";
}
