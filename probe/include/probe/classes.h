/* Allocator size classes: built-in models of glibc, mimalloc 2.x, jemalloc 5.x and tcmalloc
 * (gperftools 2.10), and an empirical prober that asks the real allocator. */
#ifndef PROBE_CLASSES_H
#define PROBE_CLASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum allocator { ALLOC_GLIBC, ALLOC_MIMALLOC, ALLOC_JEMALLOC, ALLOC_TCMALLOC, ALLOC_COUNT };

struct class_model {
    const char *name;    /* "glibc", "mimalloc", ... as in the layout JSON */
    const char *version; /* what the model describes */
    const char *library; /* Debian's shared library, for the prober; NULL: the C library */
};

extern const struct class_model probe_class_models[ALLOC_COUNT];

struct size_class {
    uint64_t reserved; /* bytes the allocator sets aside for the block: its class */
    uint64_t usable;   /* what malloc_usable_size reports */
    uint64_t align;    /* alignment every block of the class gets */
};

/* The modelled class of a request of size bytes (1 .. 1 GiB); false outside the model's range. */
bool probe_class_of(enum allocator a, uint64_t size, struct size_class *out);

struct probe_result {
    uint64_t size, usable, stride, align;
};

/* Runs a child with library preloaded (NULL: the C library's allocator) that allocates 64 blocks
 * of each size and reports usable size, smallest distance between neighbouring blocks, and the
 * largest power of two dividing every address. Returns false with a message in error. */
bool probe_class_probe(const char *self_exe, const char *library, const uint64_t *sizes, size_t n,
                       struct probe_result *out, char *error, size_t error_size);

/* The child's side: prints "size usable stride align" per size. Returns the exit status. */
int probe_class_probe_child(int argc, char **argv);

#endif
