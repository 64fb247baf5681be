/* What the allocator shims' calls leave in the records: each entry point's call count (the table
 * the shims call through is entry/shims.c's), and the shims' code, whose frames stacks leave out.
 * Context: the shims' calls, any thread; counts in shards chosen by thread. */
#include <string.h>

#include "records.h"

#define NAME_OF(id, name) [QAUDIT_##id] = name,
const char *const qa_extra_entry_names[QAUDIT_FAMILIES][QAUDIT_MAX_ENTRIES] = {
    [QAUDIT_JEMALLOC] = {QAUDIT_JEMALLOC_ENTRIES(NAME_OF)},
    [QAUDIT_TCMALLOC] = {QAUDIT_TCMALLOC_ENTRIES(NAME_OF)},
    [QAUDIT_MIMALLOC] = {QAUDIT_MIMALLOC_ENTRIES(NAME_OF)}};
#undef NAME_OF
const unsigned qa_extra_entry_count[QAUDIT_FAMILIES] = {
    QAUDIT_JEMALLOC_COUNT, QAUDIT_TCMALLOC_COUNT, QAUDIT_MIMALLOC_COUNT};
_Static_assert(QAUDIT_JEMALLOC_COUNT <= QAUDIT_MAX_ENTRIES &&
                   QAUDIT_TCMALLOC_COUNT <= QAUDIT_MAX_ENTRIES &&
                   QAUDIT_MIMALLOC_COUNT <= QAUDIT_MAX_ENTRIES,
               "QAUDIT_MAX_ENTRIES");

/* Call counts by entry point, in shards chosen by thread so that threads calling the same entry
 * point seldom share a line; summed when a dump is written. */
#define SHARDS 16
struct shard {
    _Alignas(64) atomic_uint_fast64_t calls[QAUDIT_FAMILIES][QAUDIT_MAX_ENTRIES];
};
static struct shard shards[SHARDS];
/* Set at the first count: a process no shim counted for (most) leaves the shards' pages alone
 * at a fork, so its children copy none of them. */
static atomic_bool tallied QA_FORK_STATE;

void qa_shim_tally(unsigned family, unsigned entry)
{
    if (family >= QAUDIT_FAMILIES || entry >= qa_extra_entry_count[family])
        return;
    if (!atomic_load_explicit(&tallied, memory_order_relaxed))
        atomic_store_explicit(&tallied, true, memory_order_relaxed);
    uintptr_t thread = (uintptr_t)__builtin_thread_pointer();
    size_t shard = (size_t)(((thread >> 12) * 0x9e3779b97f4a7c15ull) >> 60) % SHARDS;
    atomic_fetch_add_explicit(&shards[shard].calls[family][entry], 1, memory_order_relaxed);
}

uint64_t qa_extra_calls(unsigned family, unsigned entry)
{
    uint64_t sum = 0;
    for (size_t s = 0; s < SHARDS; s++)
        sum += atomic_load_explicit(&shards[s].calls[family][entry], memory_order_relaxed);
    return sum;
}

/* The forked child counts its own life, as its totals do. */
void qa_extra_reset_after_fork(void)
{
    if (!atomic_load_explicit(&tallied, memory_order_relaxed))
        return;
    for (size_t s = 0; s < SHARDS; s++)
        for (unsigned f = 0; f < QAUDIT_FAMILIES; f++)
            for (unsigned e = 0; e < QAUDIT_MAX_ENTRIES; e++)
                atomic_store_explicit(&shards[s].calls[f][e], 0, memory_order_relaxed);
}

/* The shims' executable segments, set once at start-up before counting starts. */
#define MAX_SHIM_CODE 8
static struct {
    uintptr_t lo, hi;
} shim_code[MAX_SHIM_CODE];
static unsigned shim_code_count;

void qa_extra_add_shim_code(uintptr_t lo, uintptr_t hi)
{
    if (shim_code_count < MAX_SHIM_CODE) {
        shim_code[shim_code_count].lo = lo;
        shim_code[shim_code_count].hi = hi;
        shim_code_count++;
    }
}

static bool in_shim(const void *ip)
{
    for (unsigned i = 0; i < shim_code_count; i++)
        if ((uintptr_t)ip >= shim_code[i].lo && (uintptr_t)ip < shim_code[i].hi)
            return true;
    return false;
}

/* A stack taken under a shim's entry point: its frames on top left out, at most max kept. */
int qa_extra_strip(void **frames, int depth, int max)
{
    int skip = 0;
    while (skip < depth && in_shim(frames[skip]))
        skip++;
    depth -= skip;
    if (depth > max)
        depth = max;
    if (skip > 0 && depth > 0)
        memmove(frames, frames + skip, (size_t)depth * sizeof *frames);
    return depth;
}
