/* Which live blocks a forked child allocated itself, so that its frees of blocks it inherited at
 * the fork are told apart exactly (docs/design.md, "Forks"). One bit per 8 bytes of address
 * space, set when the child's allocation is counted and taken back at its free: a free that finds
 * its bit clear is of a block allocated before the fork. Blocks of every allocator are at least
 * 8-byte aligned and distinct live blocks start at distinct 8-byte granules, so a bit is one
 * block. The bits live in one bitmap per GiB of addresses (16 MiB, mmap'd without reserve on the
 * first block there, so only the pages of the heap actually used cost memory: 1/64 of it),
 * found through a table of 2^17 pointers (user space is 47 bits on x86-64). Bits are set and
 * cleared with atomic or/and: two threads' blocks may share a word.
 * Context: the malloc fast path (no lock, no allocation; qa_owned_map_region's mmap is a system
 * call, not malloc) and the fork handler of the child. */
#include <string.h>
#include <sys/mman.h>

#include "records.h"

#define REGION_SHIFT 30
#define GRANULE_SHIFT 3
#define REGIONS (1u << (47 - REGION_SHIFT))
#define REGION_WORDS ((1ull << (REGION_SHIFT - GRANULE_SHIFT)) / 64)

bool qa_owned_tracking QA_FORK_STATE;
/* REGIONS entries, mapped by the parent at its first fork (or at an attach). */
static _Atomic(_Atomic uint64_t *) *regions QA_FORK_STATE;
/* Blocks outside 47-bit addresses, or no memory. */
atomic_uint_fast64_t qa_owned_untracked QA_FORK_STATE;
/* The regions with a bitmap, so that a fork visits those only: reading the whole table would
 * fault in 256 pages of it in every child. 64 GiB of address space holding blocks: a process
 * past it has its whole table read at each fork (small enough for qa_fork_state's one page). */
#define LISTED_MAX 64
static _Atomic uint32_t listed[LISTED_MAX] QA_FORK_STATE;
static atomic_uint listed_count QA_FORK_STATE;

/* The bitmap of p's region, mapped on first use when create. NULL when it cannot be. */
static _Atomic uint64_t *region_of(uintptr_t p, bool create)
{
    uintptr_t index = p >> REGION_SHIFT;
    if (regions == NULL || index >= REGIONS)
        return NULL;
    _Atomic uint64_t *map = atomic_load_explicit(&regions[index], memory_order_acquire);
    if (map != NULL || !create)
        return map;
    _Atomic uint64_t *fresh = qa_mmap(REGION_WORDS * sizeof(uint64_t));
    if (fresh == NULL)
        return NULL;
    _Atomic uint64_t *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&regions[index], &expected, fresh,
                                                memory_order_acq_rel, memory_order_acquire)) {
        unsigned slot = atomic_fetch_add(&listed_count, 1);
        if (slot < LISTED_MAX)
            atomic_store(&listed[slot], (uint32_t)index);
        return fresh;
    }
    munmap((void *)fresh, REGION_WORDS * sizeof(uint64_t)); /* another thread mapped it first */
    return expected;
}

static inline size_t granule(uintptr_t p)
{
    return (p & ((1ull << REGION_SHIFT) - 1)) >> GRANULE_SHIFT;
}

void qa_owned_mark(const void *block)
{
    uintptr_t p = (uintptr_t)block;
    _Atomic uint64_t *map = region_of(p, true);
    if (map == NULL) {
        atomic_fetch_add_explicit(&qa_owned_untracked, 1, memory_order_relaxed);
        return;
    }
    size_t g = granule(p);
    atomic_fetch_or_explicit(&map[g / 64], 1ull << (g % 64), memory_order_relaxed);
}

bool qa_owned_take(const void *block)
{
    uintptr_t p = (uintptr_t)block;
    _Atomic uint64_t *map = region_of(p, false);
    if (map == NULL)
        return false;
    size_t g = granule(p);
    uint64_t bit = 1ull << (g % 64);
    return atomic_fetch_and_explicit(&map[g / 64], ~bit, memory_order_relaxed) & bit;
}

/* Before a fork, in the parent: the table, and the bitmap of the region the forking thread
 * allocated in last, mapped once and never written there (the parent marks nothing), so that
 * each child finds them inherited with no page present instead of mapping its own: two system
 * calls, a page of the C library's code and a page of the table in every child of a prefork
 * server. */
void qa_owned_before_fork(void)
{
    if (regions == NULL)
        regions = qa_mmap(REGIONS * sizeof *regions);
    struct qa_thread *t = qa_tls_thread();
    uintptr_t last = t != NULL ? t->last_alloc & ~QA_LAST_ALLOC_SPENT : 0;
    if (!qa_owned_tracking && last != 0)
        region_of(last, true);
}

/* In a forked child, before it counts anything: every block live now is inherited, so every bit
 * goes (a grandchild inherits its parent's own blocks as well as what that one inherited); a
 * parent that marked nothing left every bitmap clear. Later forks zero the bitmaps already
 * mapped (MADV_DONTNEED on private anonymous memory gives zero pages back, touching only page
 * tables). */
void qa_owned_reset_after_fork(void)
{
    if (regions == NULL) {
        qa_owned_tracking = false; /* no memory for the table */
        return;
    }
    if (!qa_owned_tracking) {
        qa_owned_tracking = true;
        return;
    }
    unsigned count = atomic_load(&listed_count);
    for (size_t k = 0; k < (count < LISTED_MAX ? count : REGIONS); k++) {
        size_t i = count < LISTED_MAX ? atomic_load(&listed[k]) : k; /* past the list: all */
        _Atomic uint64_t *map = atomic_load_explicit(&regions[i], memory_order_relaxed);
        if (map != NULL)
            madvise((void *)map, REGION_WORDS * sizeof(uint64_t), MADV_DONTNEED);
    }
    qa_owned_tracking = true;
}
