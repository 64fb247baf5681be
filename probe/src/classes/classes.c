/* Size-class models. glibc: chunk = max(32, (n + 8 + 15) & ~15), usable = chunk - 8, below the
 * mmap threshold (128 KiB); above it a page-rounded mapping with a 16-byte header. jemalloc 5.x
 * and mimalloc 2.x (as Debian 12 builds them): 8, 16, then 16-byte steps to 64, then four classes
 * per doubling (mimalloc above 128 KiB: whole 64 KiB slices). tcmalloc (gperftools 2.10, 8 KiB
 * pages): the class table that version computes at start-up, up to 256 KiB, then whole pages. Each
 * is checked against the real allocator by test_classes for every size from 1 to 4096 and a set of
 * larger ones. */
#include "probe/classes.h"
#include "../base/probe_base.h"

const struct class_model probe_class_models[ALLOC_COUNT] = {
    [ALLOC_GLIBC] = {"glibc", "glibc 2.36 ptmalloc", NULL},
    [ALLOC_MIMALLOC] = {"mimalloc", "mimalloc 2.0.9", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"},
    [ALLOC_JEMALLOC] = {"jemalloc", "jemalloc 5.3.0", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"},
    [ALLOC_TCMALLOC] = {"tcmalloc", "gperftools 2.10",
                        "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"},
};

/* gperftools 2.10's small-object classes on x86-64 (kPageShift 13), as its SizeMap computes. */
static const uint32_t tcmalloc_classes[] = {
    8,      16,     32,     48,     64,     80,     96,     112,    128,    144,    160,
    176,    192,    208,    224,    240,    256,    288,    320,    352,    384,    416,
    448,    480,    512,    576,    640,    704,    768,    896,    1024,   1152,   1280,
    1408,   1536,   1792,   2048,   2304,   2560,   2816,   3072,   3328,   4096,   4608,
    5120,   6144,   6656,   8192,   9216,   10240,  12288,  13312,  16384,  20480,  24576,
    26624,  32768,  40960,  49152,  57344,  65536,  73728,  81920,  90112,  98304,  106496,
    114688, 122880, 131072, 139264, 147456, 155648, 163840, 172032, 180224, 188416, 196608,
    204800, 212992, 221184, 229376, 237568, 245760, 253952, 262144};

/* The largest power of two dividing n, capped at cap. */
static uint64_t natural_align(uint64_t n, uint64_t cap)
{
    uint64_t a = n & -n;
    return a > cap ? cap : a;
}

/* 8, 16, 16-byte steps to 64, then four classes per power of two. */
static uint64_t geometric_class(uint64_t n)
{
    if (n <= 8)
        return 8;
    if (n <= 64)
        return probe_round_up(n, 16);
    unsigned p = 63u - (unsigned)__builtin_clzll(n - 1); /* 2^p < n <= 2^(p+1) */
    return probe_round_up(n, (uint64_t)1 << (p - 2));
}

bool probe_class_of(enum allocator a, uint64_t size, struct size_class *out)
{
    if (size == 0 || size > ((uint64_t)1 << 30))
        return false;
    switch (a) {
    case ALLOC_GLIBC: {
        /* Requests from M_MMAP_THRESHOLD (128 KiB, raised at run time as mapped chunks are
         * freed) may be mapped instead: probe_round_up(size + 16, 4096) - 16 usable. */
        uint64_t chunk = (size + 8 + 15) & ~(uint64_t)15;
        chunk = chunk < 32 ? 32 : chunk;
        *out = (struct size_class){chunk, chunk - 8, 16};
        return true;
    }
    case ALLOC_MIMALLOC:
        /* Above MI_MEDIUM_OBJ_SIZE_MAX (128 KiB) blocks take whole 64 KiB slices. */
        if (size > 128 * 1024) {
            uint64_t c = probe_round_up(size, 64 * 1024);
            *out = (struct size_class){c, c, 16};
            return true;
        }
        /* Below that, jemalloc's progression; mimalloc aligns to at most 16. */
        *out = (struct size_class){geometric_class(size), geometric_class(size),
                                   natural_align(geometric_class(size), 16)};
        return true;
    case ALLOC_JEMALLOC: {
        /* Small classes (to 14 KiB) sit at multiples of their size in page-aligned slabs; large
         * ones are shifted by a random number of cache lines (opt.cache_oblivious). */
        uint64_t c = geometric_class(size);
        *out = (struct size_class){c, c, c <= 14336 ? natural_align(c, 4096) : 64};
        return true;
    }
    case ALLOC_TCMALLOC:
        for (size_t i = 0; i < sizeof tcmalloc_classes / sizeof tcmalloc_classes[0]; i++)
            if (size <= tcmalloc_classes[i]) {
                uint64_t c = tcmalloc_classes[i];
                *out = (struct size_class){c, c, natural_align(c, 8192)};
                return true;
            }
        *out = (struct size_class){probe_round_up(size, 8192), probe_round_up(size, 8192), 8192};
        return true;
    default:
        return false;
    }
}
