/* Allocation sites. A site is a distinct stack of return addresses (stacks.c); sites live in
 * mmap'd records published into an open-addressing index with a CAS, so finding or adding one
 * takes no lock. A thread's counts for a site wait in its record (a slot fixed by the site's id)
 * until the slot is needed for another site; dumps read them where they are. A forked child
 * adopts a site at its first count there (its inheritance kept apart).
 * Context: the slow path (qa_site_of_stack, qa_site_alloc, qa_site_free); dumps read (qa_site_get).
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "records.h"

#define MAX_SITES 65536
#define INDEX_SLOTS (MAX_SITES * 2)

struct site {
    uint64_t hash;
    int depth;
    /* The fork generation (qa_fork_generation) whose own counts these are. A forked child makes
     * a site its own the first time it counts there (adopt): what the site held then becomes its
     * inherited figures and the counts start from zero. Sites it never touches keep the parent's
     * counts, read as inherited: no page of the table is written at the fork. */
    _Atomic uint32_t generation;
    atomic_uint_fast64_t allocs, frees, bytes, queue_allocs, never_written, temporary;
    atomic_uint_fast64_t weight_allocs, weight_bytes;
    _Atomic int64_t live_bytes, peak_live_bytes;
    _Atomic int64_t inherited_blocks, inherited_bytes; /* held at the fork of this generation */
    atomic_uint_fast64_t inherited_freed, inherited_freed_bytes;
    void *frames[QA_MAX_DEPTH];
};

/* generation while one thread adopts the site; nobody else writes it meanwhile. */
#define ADOPTING UINT32_MAX

static struct site *sites;           /* sites[0] is "no site"; sites[1] collects overflow */
static _Atomic uint32_t *site_index; /* slot -> site id, 0 when empty */
static atomic_uint_fast32_t next_site = 2;
static pthread_once_t sites_once = PTHREAD_ONCE_INIT;
static atomic_bool sites_ready;
atomic_uint_fast64_t qa_sites_dropped QA_FORK_STATE;

static void sites_setup(void)
{
    sites = qa_mmap((size_t)MAX_SITES * sizeof *sites);
    site_index = qa_mmap((size_t)INDEX_SLOTS * sizeof *site_index);
    atomic_store_explicit(&sites_ready, true, memory_order_release);
}

/* Every stack needs the tables: one load once they exist, pthread_once's call before. */
static void ensure_sites(void)
{
    if (!atomic_load_explicit(&sites_ready, memory_order_acquire))
        pthread_once(&sites_once, sites_setup);
}

static uint64_t hash_frames(void *const *frames, int depth)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)depth;
    for (int i = 0; i < depth; i++)
        h = (h ^ (uint64_t)(uintptr_t)frames[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

/* Compared in line: stacks are a few frames, fewer than memcmp's call costs. */
static bool same(const struct site *s, uint64_t hash, void *const *frames, int depth)
{
    if (s->hash != hash || s->depth != depth)
        return false;
    for (int i = 0; i < depth; i++)
        if (s->frames[i] != frames[i])
            return false;
    return true;
}

/* Out of line: the memo's hit path (qa_site_of_stack) then saves and restores none of the
 * registers this one needs. */
__attribute__((noinline)) static uint32_t site_for_hash(void *const *frames, int depth,
                                                        uint64_t hash)
{
    ensure_sites();
    if (sites == NULL || site_index == NULL)
        return 0;
    for (size_t probe = 0; probe < INDEX_SLOTS; probe++) {
        _Atomic uint32_t *slot = &site_index[(hash + probe) & (INDEX_SLOTS - 1)];
        uint32_t id = atomic_load_explicit(slot, memory_order_acquire);
        if (id == 0) {
            uint32_t fresh = (uint32_t)atomic_fetch_add(&next_site, 1);
            if (fresh >= MAX_SITES) {
                atomic_fetch_add_explicit(&qa_sites_dropped, 1, memory_order_relaxed);
                return 1;
            }
            struct site *s = &sites[fresh];
            s->hash = hash;
            s->depth = depth;
            atomic_store_explicit(&s->generation, qa_fork_generation, memory_order_relaxed);
            memcpy(s->frames, frames, (size_t)depth * sizeof *frames);
            uint32_t expected = 0;
            if (atomic_compare_exchange_strong_explicit(slot, &expected, fresh,
                                                        memory_order_release, memory_order_acquire))
                return fresh;
            id = expected; /* another thread took the slot; the fresh record stays unused */
            s->depth = -1;
        }
        if (same(&sites[id], hash, frames, depth))
            return id;
    }
    atomic_fetch_add_explicit(&qa_sites_dropped, 1, memory_order_relaxed);
    return 1;
}

__attribute__((noinline)) static uint32_t memo_miss(struct qa_stack_memo *m, void *const *frames,
                                                    int depth, uint64_t hash)
{
    uint32_t id = site_for_hash(frames, depth, hash);
    if (id > 1)
        *m = (struct qa_stack_memo){.hash = hash, .site = id, .depth = (uint32_t)depth};
    return id;
}

/* The site of a stack through the thread's memo (types.h, struct qa_stack_memo): an entry names
 * a site whose stack had the same hash; it is that stack's site only if the site's own frames,
 * written before the site was published and never after, are these. Only real sites are kept
 * (not 0, no table, nor 1, the overflow, whose every stack must count in qa_sites_dropped).
 * Costs a hash and a comparison of the frames on a hit: no index probe, no shared line written. */
uint32_t qa_site_of_stack(struct qa_thread *t, void *const *frames, int depth)
{
    uint64_t hash = hash_frames(frames, depth);
    struct qa_stack_memo *m = &t->stack_memo[(hash >> 7) & (QA_STACK_MEMO - 1)];
    if (m->hash == hash && m->depth == (uint32_t)depth) {
        void *const *kept = sites[m->site].frames;
        int i = 0;
        while (i < depth && kept[i] == frames[i])
            i++;
        if (i == depth)
            return m->site;
    }
    return memo_miss(m, frames, depth, hash);
}

static void site_peak(struct site *s, int64_t live)
{
    int64_t peak = atomic_load_explicit(&s->peak_live_bytes, memory_order_relaxed);
    while (live > peak &&
           !atomic_compare_exchange_weak_explicit(&s->peak_live_bytes, &peak, live,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

/* Blocks and bytes a site holds: its own live ones and what it still holds of an inheritance. */
static int64_t held_blocks(const struct site *s)
{
    return (int64_t)(atomic_load(&s->allocs) - atomic_load(&s->frees)) +
           atomic_load(&s->inherited_blocks) - (int64_t)atomic_load(&s->inherited_freed);
}

static int64_t held_bytes(const struct site *s)
{
    return atomic_load(&s->live_bytes) + atomic_load(&s->inherited_bytes) -
           (int64_t)atomic_load(&s->inherited_freed_bytes);
}

/* A forked child's first count at a site: what the site holds becomes the child's inheritance
 * there, its own counts start from zero. One thread adopts (generation ADOPTING meanwhile); the
 * others wait for it, as qa_site_get does. */
static void adopt(struct site *s)
{
    uint32_t seen = atomic_load_explicit(&s->generation, memory_order_acquire);
    while (seen != qa_fork_generation) {
        if (seen == ADOPTING) {
            sched_yield();
            seen = atomic_load_explicit(&s->generation, memory_order_acquire);
            continue;
        }
        if (!atomic_compare_exchange_weak_explicit(&s->generation, &seen, ADOPTING,
                                                   memory_order_acquire, memory_order_acquire))
            continue;
        int64_t blocks = held_blocks(s), bytes = held_bytes(s);
        atomic_store(&s->inherited_blocks, blocks);
        atomic_store(&s->inherited_bytes, bytes);
        atomic_store(&s->inherited_freed, 0);
        atomic_store(&s->inherited_freed_bytes, 0);
        atomic_store(&s->allocs, 0);
        atomic_store(&s->frees, 0);
        atomic_store(&s->bytes, 0);
        atomic_store(&s->queue_allocs, 0);
        atomic_store(&s->never_written, 0);
        atomic_store(&s->temporary, 0);
        atomic_store(&s->weight_allocs, 0);
        atomic_store(&s->weight_bytes, 0);
        atomic_store(&s->live_bytes, 0);
        atomic_store(&s->peak_live_bytes, 0);
        atomic_store_explicit(&s->generation, qa_fork_generation, memory_order_release);
        return;
    }
}

/* Moves a thread's pending counts for one site into the shared record. The site's peak is the
 * shared live count plus this thread's highest pending excess: exact for a site used by one
 * thread, a lower bound otherwise. */
static void flush_delta(struct qa_site_delta *d)
{
    if (d->id == 0 || sites == NULL)
        return;
    struct site *s = &sites[d->id];
    adopt(s);
    atomic_fetch_add_explicit(&s->inherited_freed, d->inherited_freed, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->inherited_freed_bytes, d->inherited_freed_bytes,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&s->allocs, d->allocs, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->frees, d->frees, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->bytes, d->bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->queue_allocs, d->queue_allocs, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->never_written, d->never_written, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->temporary, d->temporary, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->weight_allocs, d->weight_allocs, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->weight_bytes, d->weight_bytes, memory_order_relaxed);
    int64_t before = atomic_fetch_add_explicit(&s->live_bytes, d->live_bytes, memory_order_relaxed);
    site_peak(s, before + d->live_peak);
    memset(d, 0, sizeof *d);
}

/* A site's pending counts on a thread always sit in the same slot, so a dump finds them there
 * without taking them from their thread. */
static struct qa_site_delta *delta_slot(struct qa_thread *t, uint32_t id)
{
    return &t->site_deltas[(id * 2654435761u) >> 24];
}

static struct qa_site_delta *delta_for(struct qa_thread *t, uint32_t id)
{
    struct qa_site_delta *d = delta_slot(t, id);
    if (d->id != id) {
        flush_delta(d);
        d->id = id;
    }
    return d;
}

/* The sampler's weights of an allocation counted by bytes (sampled mode, by bytes: by count,
 * each sample stands for N allocations and is weighed at dump time). */
__attribute__((noinline)) static void site_weigh(struct qa_site_delta *d, uint64_t size)
{
    uint64_t allocs, bytes;
    qa_sample_weight(size, &allocs, &bytes);
    d->weight_allocs += allocs;
    d->weight_bytes += bytes;
}

static inline void count_alloc(struct qa_site_delta *d, uint64_t size, bool queue)
{
    d->allocs++;
    d->bytes += size;
    d->queue_allocs += queue;
    d->live_bytes += (int64_t)size;
    if (d->live_bytes > d->live_peak)
        d->live_peak = d->live_bytes;
    if (qa_cfg.stacks == QA_STACKS_SAMPLED && qa_cfg.sample_by_bytes)
        site_weigh(d, size); /* last: a tail call */
}

/* The rare case of an allocation's count: the slot holds another site's counts first. Out of
 * line, so that the common case calls nothing and saves no register (45 instructions a malloc
 * in fp mode before, most of them the saves this call needed). */
__attribute__((noinline)) static void site_alloc_claiming(struct qa_thread *t, uint32_t id,
                                                          uint64_t size, bool queue)
{
    count_alloc(delta_for(t, id), size, queue);
}

/* id 0: no site. Any other id was handed out by the site table, so the table exists. */
void qa_site_alloc(struct qa_thread *t, uint32_t id, uint64_t size, bool queue)
{
    if (id == 0)
        return;
    struct qa_site_delta *d = delta_slot(t, id);
    if (__builtin_expect(d->id != id, 0)) {
        site_alloc_claiming(t, id, size, queue);
        return;
    }
    count_alloc(d, size, queue);
}

static atomic_uint_fast64_t never_written_unattributed QA_FORK_STATE;

static inline void count_free(struct qa_site_delta *d, uint64_t size, uint64_t never_written,
                              bool temporary)
{
    d->frees++;
    d->live_bytes -= (int64_t)size;
    d->never_written += never_written;
    d->temporary += temporary;
}

__attribute__((noinline)) static void site_free_claiming(struct qa_thread *t, uint32_t id,
                                                         uint64_t size, uint64_t never_written,
                                                         bool temporary)
{
    count_free(delta_for(t, id), size, never_written, temporary);
}

void qa_site_free(struct qa_thread *t, uint32_t id, uint64_t size, uint64_t never_written,
                  bool temporary)
{
    if (id == 0) {
        atomic_fetch_add_explicit(&never_written_unattributed, never_written, memory_order_relaxed);
        return;
    }
    struct qa_site_delta *d = delta_slot(t, id);
    if (__builtin_expect(d->id != id, 0)) {
        site_free_claiming(t, id, size, never_written, temporary);
        return;
    }
    count_free(d, size, never_written, temporary);
}

/* A forked child's free of a block it inherited, at the block's site. */
void qa_site_free_inherited(struct qa_thread *t, uint32_t id, uint64_t size)
{
    if (id == 0 || sites == NULL)
        return;
    struct qa_site_delta *d = delta_for(t, id);
    d->inherited_freed++;
    d->inherited_freed_bytes += size;
}

uint64_t qa_never_written_unattributed(void);
uint64_t qa_never_written_unattributed(void)
{
    return atomic_load(&never_written_unattributed);
}

/* Before a fork, in the parent: the forking thread's pending counts go into the shared records
 * now, which the child would otherwise do in its first moments (below), writing every page of the
 * site table and of its record they touch: 7 copy-on-write faults of a small child's 73 in
 * `always`. Here nothing is copied (no child shares the pages yet), and a parent that counted
 * nothing since its last fork writes nothing. Only its own thread's: the others count into theirs
 * meanwhile. */
void qa_sites_before_fork(void)
{
    struct qa_thread *t = qa_self_if_registered();
    if (t == NULL || sites == NULL)
        return;
    size_t first = 0; /* read before the guard is written: its page too would be a fault */
    while (first < QA_LOCAL_SITES && t->site_deltas[first].id == 0)
        first++;
    if (first == QA_LOCAL_SITES)
        return;
    if (qa_guard(t)) /* a fork from inside the interposer: the record is half-way in a change */
        return;
    for (size_t i = first; i < QA_LOCAL_SITES; i++)
        if (t->site_deltas[i].id != 0)
            flush_delta(&t->site_deltas[i]);
    qa_guard_restore(t, false);
}

/* In a forked child, before its generation begins: every thread's pending counts (the parent's
 * threads' records are still readable here) belong to the parent's account, so they go into
 * the shared records, under the parent's generation. Only the sites they name are written. */
void qa_sites_flush_all(void)
{
    for (struct qa_thread *t = qa_threads_head(); sites != NULL && t != NULL; t = t->next)
        for (size_t i = 0; i < QA_LOCAL_SITES; i++)
            if (t->site_deltas[i].id != 0)
                flush_delta(&t->site_deltas[i]);
    atomic_store(&never_written_unattributed, 0);
}

uint32_t qa_site_count(void)
{
    uint32_t n = (uint32_t)atomic_load(&next_site);
    return n < MAX_SITES ? n : MAX_SITES;
}

/* A site's shared record plus what each thread still holds for it. The threads' figures are
 * read, never moved: a thread may be adding to them meanwhile, and a dump that took them would
 * lose that addition for good. A dump written while threads allocate is therefore a moment's
 * reading that may be off by the calls in flight; the counts themselves are never lost. */
bool qa_site_get(uint32_t id, struct qa_site_view *out)
{
    if (sites == NULL || id < 1 || id >= qa_site_count() || sites[id].depth < 0)
        return false;
    struct site *s = &sites[id];
    if (id > 1 && s->hash == 0)
        return false; /* being written */
    uint32_t generation;
    while ((generation = atomic_load_explicit(&s->generation, memory_order_acquire)) == ADOPTING)
        sched_yield();
    *out = (struct qa_site_view){.id = id, .depth = s->depth, .frames = s->frames};
    int64_t live = 0, peak = 0;
    if (generation == qa_fork_generation) {
        live = atomic_load(&s->live_bytes);
        peak = atomic_load(&s->peak_live_bytes);
        out->allocs = atomic_load(&s->allocs);
        out->frees = atomic_load(&s->frees);
        out->bytes = atomic_load(&s->bytes);
        out->never_written = atomic_load(&s->never_written);
        out->queue_allocs = atomic_load(&s->queue_allocs);
        out->temporary = atomic_load(&s->temporary);
        out->weight_allocs = atomic_load(&s->weight_allocs);
        out->weight_bytes = atomic_load(&s->weight_bytes);
        out->inherited_blocks = atomic_load(&s->inherited_blocks);
        out->inherited_bytes = atomic_load(&s->inherited_bytes);
        out->inherited_freed = atomic_load(&s->inherited_freed);
        out->inherited_freed_bytes = atomic_load(&s->inherited_freed_bytes);
    } else { /* a forked child never counted here: all the site holds is inherited */
        out->inherited_blocks = held_blocks(s);
        out->inherited_bytes = held_bytes(s);
    }
    int64_t pending_live = 0;
    for (struct qa_thread *t = qa_threads_head(); t != NULL; t = t->next) {
        const struct qa_site_delta *d = delta_slot(t, id);
        if (d->id != id)
            continue;
        out->allocs += d->allocs;
        out->frees += d->frees;
        out->bytes += d->bytes;
        out->never_written += d->never_written;
        out->queue_allocs += d->queue_allocs;
        out->temporary += d->temporary;
        out->weight_allocs += d->weight_allocs;
        out->weight_bytes += d->weight_bytes;
        out->inherited_freed += d->inherited_freed;
        out->inherited_freed_bytes += d->inherited_freed_bytes;
        pending_live += d->live_bytes;
        if (live + d->live_peak > peak)
            peak = live + d->live_peak; /* as a flush would record it */
    }
    out->live_bytes = (uint64_t)(live + pending_live);
    out->peak_live_bytes = (uint64_t)(peak > live + pending_live ? peak : live + pending_live);
    /* Listed with its stack only where the image allocated or freed its own blocks: a forked
     * child's frees of inherited blocks alone leave the site in inherited_sites, by id (a
     * backend freeing thousands of its postmaster's blocks would otherwise copy their stacks). */
    out->touched = out->allocs > 0 || out->frees > 0;
    return out->touched || out->inherited_blocks > 0;
}
