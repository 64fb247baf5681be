/* Default queue allocation (malloc, or aligned_alloc for over-aligned elements) and the switch
 * that lets tests substitute their own. */
#include "queue/queue_alloc.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>

static void *default_alloc(size_t size, size_t align, void *ctx)
{
    (void)ctx;
    if (align <= alignof(max_align_t))
        return malloc(size);
    /* aligned_alloc wants a multiple of align; element arrays already are one. */
    size_t rounded = (size + align - 1) & ~(align - 1);
    if (rounded < size)
        return NULL;
    return aligned_alloc(align, rounded);
}

static void default_release(void *block, size_t size, void *ctx)
{
    (void)size, (void)ctx;
    free(block);
}

static const struct queue_allocator default_allocator = {default_alloc, default_release, NULL};
static struct queue_allocator current = {default_alloc, default_release, NULL};

void queue_set_allocator(const struct queue_allocator *allocator)
{
    current = allocator ? *allocator : default_allocator;
}

void *queue_alloc(size_t size, size_t align)
{
    return current.alloc(size, align, current.ctx);
}

void queue_release(void *block, size_t size)
{
    current.release(block, size, current.ctx);
}
