/* Before the next allocator is known, dlsym may allocate (dlerror's buffer): those blocks come
 * from a static bump arena, each with its size in front, and are recognised by address when
 * freed or resized (qa_in_bootstrap). The size word carries glibc's mmap bit
 * (QA_CHUNK_MMAPPED, base/globals.h), so that the fast free path, which tests that bit in the
 * header it reads anyway, sends these blocks to the slow path without an address test. Context: the
 * first calls of the process, any thread. */
#include <string.h>

#include "base.h"

static atomic_size_t used;

void *qa_bootstrap_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    size_t start = atomic_load(&used), next, data;
    do {
        data = (start + 16 + align - 1) & ~(align - 1);
        next = data + size;
        if (next > sizeof qa_bootstrap_arena)
            return NULL;
    } while (!atomic_compare_exchange_weak(&used, &start, next));
    size_t header = size << 3 | QA_CHUNK_MMAPPED;
    memcpy(qa_bootstrap_arena + data - sizeof(size_t), &header, sizeof header);
    return qa_bootstrap_arena + data;
}

size_t qa_bootstrap_size(const void *p)
{
    size_t header;
    memcpy(&header, (const char *)p - sizeof header, sizeof header);
    return header >> 3;
}
