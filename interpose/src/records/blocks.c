/* The live-block table: pointer -> requested size, site and flags, for what free() must know
 * (per-site frees and live bytes, poison checks). 256 shards, each an open-addressing table in
 * mmap'd memory behind its own spinlock, so two threads rarely meet; deletion shifts entries
 * back instead of leaving tombstones. Enabled only when stacks or poison need it.
 * free() first asks the block's shard, without its lock, whether it holds anything: most frees
 * in `queue` mode are of blocks never tracked, and asking touches no line shared by all threads.
 * Insert and remove are inlined into the slow paths that call them (by the link-time optimiser,
 * as qa_capture is): their common case, the lock free at the first try and room in the shard,
 * calls nothing; the waits and the growth are out of line.
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
    /* 64 - log2(capacity): a block's home slot is the top bits of one multiplication (home). */
    unsigned char shift;
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

#define FIBONACCI 0x9e3779b97f4a7c15ull

/* A shard per 64 KiB region of addresses, hashed (Fibonacci: the top bits of one multiplication):
 * allocators hand each thread blocks from regions of its own (glibc's arenas, the others'
 * per-thread caches), so two threads' blocks seldom share a shard and its lock's cache line. */
static struct shard *shard_of(uintptr_t ptr)
{
    return &shards[((uint64_t)(ptr >> 16) * FIBONACCI) >> (64 - SHARD_BITS)];
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

/* The lock's first try, in line: true when taken with no fork under way (or this thread's own). */
static inline bool try_lock(struct shard *s)
{
    if (atomic_exchange_explicit(&s->lock, true, memory_order_seq_cst))
        return false;
    uintptr_t f = atomic_load_explicit(&forking, memory_order_seq_cst);
    if (f == 0 || f == this_thread())
        return true;
    atomic_store_explicit(&s->lock, false, memory_order_release);
    return false;
}

static void lock(struct shard *s)
{
    if (!try_lock(s))
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

/* A block's home slot in a shard of 2^(64 - shift) slots: Fibonacci hashing of the address, one
 * multiplication and one shift (a multiplication, two shifts, a xor and a mask before). */
static inline size_t home(uintptr_t ptr, unsigned shift)
{
    return (size_t)(((uint64_t)ptr * FIBONACCI) >> shift);
}

static void place(struct shard *s, struct qa_block *slots, const struct qa_block *b)
{
    size_t mask = s->capacity - 1, i = home(b->ptr, s->shift);
    while (slots[i].ptr != 0 && slots[i].ptr != b->ptr)
        i = (i + 1) & mask;
    slots[i] = *b;
}

/* Doubles the shard (or creates it); false when mmap fails. */
static bool grow_shard(struct shard *s)
{
    size_t old_capacity = s->capacity, capacity = old_capacity ? old_capacity * 2 : INITIAL_SLOTS;
    struct qa_block *slots = qa_mmap(capacity * sizeof *slots), *old = s->slots;
    if (slots == NULL)
        return false;
    s->capacity = capacity;
    s->shift = (unsigned char)(64 - __builtin_ctzll(capacity));
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i].ptr != 0)
            place(s, slots, &old[i]);
    if (old)
        munmap(old, old_capacity * sizeof *old);
    s->slots = slots;
    return true;
}

/* Under the shard's lock, room made: the entry's slot is the block's own or the first empty one
 * of its run. */
static inline void put(struct shard *s, const struct qa_block *b)
{
    size_t mask = s->capacity - 1, i = home(b->ptr, s->shift);
    struct qa_block *slots = s->slots;
    while (slots[i].ptr != 0 && slots[i].ptr != b->ptr)
        i = (i + 1) & mask;
    if (slots[i].ptr == 0)
        set_used(s, used(s) + 1);
    slots[i] = *b;
}

static bool has_room(const struct shard *s)
{
    return (used(s) + 1) * 4 <= s->capacity * 3;
}

/* An insert that waits for the lock or grows the shard: out of line, so that the common case
 * calls nothing and saves no register. */
__attribute__((noinline)) static bool insert_slow(struct shard *s, const struct qa_block *b,
                                                  bool locked)
{
    if (!locked)
        lock(s);
    bool ok = has_room(s) || grow_shard(s);
    if (ok)
        put(s, b);
    else
        atomic_fetch_add_explicit(&qa_blocks_dropped, 1, memory_order_relaxed);
    unlock(s);
    return ok;
}

__attribute__((always_inline)) inline bool qa_blocks_insert(const struct qa_block *b)
{
    struct shard *s = shard_of(b->ptr);
    if (__builtin_expect(!try_lock(s), 0))
        return insert_slow(s, b, false);
    if (__builtin_expect(!has_room(s), 0))
        return insert_slow(s, b, true);
    put(s, b);
    unlock(s);
    return true;
}

/* Under the shard's lock: takes the block's entry out into *out. Backward shift: later entries
 * of the run move into the hole when their home allows it, so lookups never need tombstones. */
static inline bool take(struct shard *s, uintptr_t ptr, struct qa_block *out)
{
    if (s->capacity == 0)
        return false;
    size_t mask = s->capacity - 1, i = home(ptr, s->shift);
    struct qa_block *slots = s->slots;
    while (slots[i].ptr != ptr) {
        if (slots[i].ptr == 0)
            return false;
        i = (i + 1) & mask;
    }
    *out = slots[i];
    size_t hole = i;
    for (size_t j = (i + 1) & mask; slots[j].ptr != 0; j = (j + 1) & mask) {
        size_t at = home(slots[j].ptr, s->shift);
        bool movable = hole <= j ? (at <= hole || at > j) : (at <= hole && at > j);
        if (movable) {
            slots[hole] = slots[j];
            hole = j;
        }
    }
    slots[hole].ptr = 0;
    set_used(s, used(s) - 1);
    return true;
}

__attribute__((noinline)) static bool remove_waiting(struct shard *s, uintptr_t ptr,
                                                     struct qa_block *out)
{
    lock(s);
    bool found = take(s, ptr, out);
    unlock(s);
    return found;
}

__attribute__((always_inline)) inline bool qa_blocks_remove(uintptr_t ptr, struct qa_block *out)
{
    struct shard *s = shard_of(ptr);
    if (used(s) == 0)
        return false; /* as in qa_blocks_may_hold */
    if (__builtin_expect(!try_lock(s), 0))
        return remove_waiting(s, ptr, out);
    bool found = take(s, ptr, out);
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
