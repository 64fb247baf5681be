/* Replaceable allocation for every queue variant: tests count and fail allocations through it,
 * the default goes to malloc/free so an LD_PRELOAD interposer sees every queue allocation. */
#ifndef QUEUE_ALLOC_H
#define QUEUE_ALLOC_H

#include <stddef.h>

struct queue_allocator {
    /* Returns a block of size bytes aligned to align (a power of two), or NULL. */
    void *(*alloc)(size_t size, size_t align, void *ctx);
    /* Releases a block returned by alloc; size is the size it was asked for. */
    void (*release)(void *block, size_t size, void *ctx);
    void *ctx;
};

/* Installs allocator for all queues (NULL restores malloc/free). Not thread-safe: call it before
 * any queue exists, or from the only thread that uses queues. */
void queue_set_allocator(const struct queue_allocator *allocator);

void *queue_alloc(size_t size, size_t align);
void queue_release(void *block, size_t size);

#endif
