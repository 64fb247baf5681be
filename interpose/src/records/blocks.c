/* The live-block table: pointer -> requested size, site and flags, for what free() must know
 * (per-site frees and live bytes, poison checks). 256 shards, each an open-addressing table in
 * mmap'd memory behind its own spinlock, so two threads rarely meet; deletion shifts entries
 * back instead of leaving tombstones. Enabled only when stacks or poison need it.
 * free() first asks the block's shard, without its lock, whether it holds anything: most frees
 * in `queue` mode are of blocks never tracked, and asking touches no line shared by all threads.
 * Context: the slow path under the guard (insert, find, remove); free's fast path reads a
 * shard's fill count without its lock; the fork handlers wait for every shard to be free. */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "records.h"

#define SHARD_BITS 8
#define SHARDS (1 << SHARD_BITS)
#define INITIAL_SLOTS 1024

/* One shard a cache line, so that threads locking neighbouring shards share none. (Padded by
 * hand before, the pad left out the hole after the lock: 72 bytes, each shard across two lines;
 * qaudit layout --reorganize showed it.) */
struct shard {
    _Alignas(64) atomic_bool lock;
    struct qa_block *slots;
    size_t capacity; /* a power of two */
    /* Changed under the lock, read without it by qa_blocks_may_hold. */
    atomic_size_t used;
};
_Static_assert(sizeof(struct shard) == 64, "a shard is one cache line");

bool qa_blocks_enabled;
atomic_uint_fast64_t qa_blocks_dropped QA_FORK_STATE;
static struct shard shards[SHARDS];

/* The thread that is forking (its thread pointer), 0 when none. Around a fork no shard lock is
 * taken: the forking thread sets this and waits, reading only, until no shard is held; a thread
 * that locks a shard and then sees it set lets the lock go untouched and waits for the fork to
 * end. So the fork handlers write none of the shards' pages (four pages that copy-on-write would
 * otherwise copy in the parent and in every child). Read at every lock, written twice per fork
 * (under the dump lock, so by one forking thread at a time). */
static _Atomic uintptr_t forking QA_FORK_STATE;

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

static uintptr_t this_thread(void)
{
    return (uintptr_t)__builtin_thread_pointer();
}

/* The exchange and the load of `forking` are sequentially consistent, as are the forking
 * thread's store and its reads of the locks: either this thread sees the fork coming, or the
 * forking thread sees this lock held and waits for its release. The forking thread itself goes
 * on (another fork handler of the program may allocate). The first try inline (a call cost 18
 * instructions of each insert and remove in fp mode), the waits out of line. */
__attribute__((noinline)) static void lock_slow(struct shard *s)
{
    for (;;) {
        while (atomic_exchange_explicit(&s->lock, true, memory_order_seq_cst))
            sched_yield();
        uintptr_t f = atomic_load_explicit(&forking, memory_order_seq_cst);
        if (f == 0 || f == this_thread())
            return;
        atomic_store_explicit(&s->lock, false, memory_order_release);
        while (atomic_load_explicit(&forking, memory_order_acquire) != 0)
            sched_yield();
    }
}

static inline void lock(struct shard *s)
{
    if (!atomic_exchange_explicit(&s->lock, true, memory_order_seq_cst)) {
        uintptr_t f = atomic_load_explicit(&forking, memory_order_seq_cst);
        if (f == 0 || f == this_thread())
            return;
        atomic_store_explicit(&s->lock, false, memory_order_release);
    }
    lock_slow(s);
}

static void unlock(struct shard *s)
{
    atomic_store_explicit(&s->lock, false, memory_order_release);
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

/* Around fork: no shard may be half-changed by a thread that does not exist in the child. Once
 * `forking` is set, a shard's lock is held only by a thread that has changed nothing and is about
 * to let it go, so the wait below ends and the shards are whole at the fork. */
void qa_blocks_before_fork(void)
{
    atomic_store_explicit(&forking, this_thread(), memory_order_seq_cst);
    for (size_t i = 0; i < SHARDS; i++)
        while (atomic_load_explicit(&shards[i].lock, memory_order_seq_cst))
            sched_yield();
}

void qa_blocks_after_fork_parent(void)
{
    atomic_store_explicit(&forking, 0, memory_order_release);
}

/* A lock the child finds held belongs to a thread of the parent's that was letting it go; only
 * those are written, so the child copies no page of the shards for its fork. */
void qa_blocks_after_fork_child(void)
{
    for (size_t i = 0; i < SHARDS; i++)
        if (atomic_load_explicit(&shards[i].lock, memory_order_relaxed))
            unlock(&shards[i]);
    atomic_store_explicit(&forking, 0, memory_order_release);
}
