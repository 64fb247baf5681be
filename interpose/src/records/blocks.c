/* The live-block table: pointer -> requested size, site and flags, for what free() must know
 * (per-site frees and live bytes, poison checks). 256 shards, each an open-addressing table in
 * mmap'd memory behind its own spinlock, so two threads rarely meet; deletion shifts entries
 * back instead of leaving tombstones. Enabled only when stacks or poison need it.
 * free() first asks the block's shard, without its lock, whether it holds anything: most frees
 * in `queue` mode are of blocks never tracked, and asking touches no line shared by all threads. */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "records.h"

#define SHARD_BITS 8
#define SHARDS (1 << SHARD_BITS)
#define INITIAL_SLOTS 1024

struct shard {
    atomic_flag lock;
    struct qa_block *slots;
    size_t capacity; /* a power of two */
    /* Changed under the lock, read without it by qa_blocks_may_hold. */
    atomic_size_t used;
    char pad[64 - sizeof(atomic_flag) - sizeof(void *) - sizeof(size_t) - sizeof(atomic_size_t)];
};

bool qa_blocks_enabled;
atomic_uint_fast64_t qa_blocks_dropped;
static struct shard shards[SHARDS];

static uint64_t mix(uintptr_t p)
{
    uint64_t h = (uint64_t)p * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* A shard per 64 KiB region of addresses, hashed: allocators hand each thread blocks from
 * regions of its own (glibc's arenas, the others' per-thread caches), so two threads' blocks
 * seldom share a shard and its lock's cache line. */
static struct shard *shard_of(uintptr_t ptr)
{
    return &shards[mix(ptr >> 16) >> (64 - SHARD_BITS)];
}

/* False is certain: the insert of a block happened before any free of it (the program passed
 * the pointer on), so the relaxed load sees that insert or a later change. */
bool qa_blocks_may_hold(uintptr_t ptr)
{
    return qa_blocks_enabled &&
           atomic_load_explicit(&shard_of(ptr)->used, memory_order_relaxed) != 0;
}

static size_t used(const struct shard *s)
{
    return atomic_load_explicit(&s->used, memory_order_relaxed);
}

static void set_used(struct shard *s, size_t n)
{
    atomic_store_explicit(&s->used, n, memory_order_relaxed);
}

static void lock(struct shard *s)
{
    while (atomic_flag_test_and_set_explicit(&s->lock, memory_order_acquire))
        sched_yield();
}

static void unlock(struct shard *s)
{
    atomic_flag_clear_explicit(&s->lock, memory_order_release);
}

void qa_blocks_init(void)
{
    qa_blocks_enabled = qa_cfg.stacks != QA_STACKS_OFF || qa_cfg.poison != QA_POISON_OFF;
}

static void place(struct qa_block *slots, size_t capacity, const struct qa_block *b)
{
    size_t i = (mix(b->ptr) >> 8) & (capacity - 1);
    while (slots[i].ptr != 0 && slots[i].ptr != b->ptr)
        i = (i + 1) & (capacity - 1);
    slots[i] = *b;
}

/* Doubles the shard (or creates it); false when mmap fails. */
static bool grow_shard(struct shard *s)
{
    size_t capacity = s->capacity ? s->capacity * 2 : INITIAL_SLOTS;
    struct qa_block *slots = qa_mmap(capacity * sizeof *slots);
    if (slots == NULL)
        return false;
    for (size_t i = 0; i < s->capacity; i++)
        if (s->slots[i].ptr != 0)
            place(slots, capacity, &s->slots[i]);
    if (s->slots)
        munmap(s->slots, s->capacity * sizeof *s->slots);
    s->slots = slots;
    s->capacity = capacity;
    return true;
}

bool qa_blocks_insert(const struct qa_block *b)
{
    uint64_t h = mix(b->ptr);
    struct shard *s = shard_of(b->ptr);
    lock(s);
    bool ok = (used(s) + 1) * 4 <= s->capacity * 3 || grow_shard(s);
    if (ok) {
        size_t i = (h >> 8) & (s->capacity - 1);
        while (s->slots[i].ptr != 0 && s->slots[i].ptr != b->ptr)
            i = (i + 1) & (s->capacity - 1);
        if (s->slots[i].ptr == 0)
            set_used(s, used(s) + 1);
        s->slots[i] = *b;
    } else {
        atomic_fetch_add_explicit(&qa_blocks_dropped, 1, memory_order_relaxed);
    }
    unlock(s);
    return ok;
}

bool qa_blocks_remove(uintptr_t ptr, struct qa_block *out)
{
    uint64_t h = mix(ptr);
    struct shard *s = shard_of(ptr);
    if (used(s) == 0)
        return false; /* as in qa_blocks_may_hold */
    lock(s);
    bool found = false;
    if (s->capacity > 0) {
        size_t mask = s->capacity - 1, i = (h >> 8) & mask;
        while (s->slots[i].ptr != 0 && s->slots[i].ptr != ptr)
            i = (i + 1) & mask;
        if (s->slots[i].ptr == ptr) {
            found = true;
            *out = s->slots[i];
            /* Backward shift: pull later entries of the run into the hole when their home
             * position allows it, so lookups never need tombstones. */
            size_t hole = i;
            for (size_t j = (i + 1) & mask; s->slots[j].ptr != 0; j = (j + 1) & mask) {
                size_t home = (mix(s->slots[j].ptr) >> 8) & mask;
                bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
                if (movable) {
                    s->slots[hole] = s->slots[j];
                    hole = j;
                }
            }
            s->slots[hole].ptr = 0;
            set_used(s, used(s) - 1);
        }
    }
    unlock(s);
    return found;
}

/* Around fork: no shard lock may be held by a thread that does not exist in the child. */
void qa_blocks_lock_all(void)
{
    for (size_t i = 0; i < SHARDS; i++)
        lock(&shards[i]);
}

void qa_blocks_unlock_all(void)
{
    for (size_t i = 0; i < SHARDS; i++)
        unlock(&shards[i]);
}
