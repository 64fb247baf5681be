/* Call stacks and allocation sites. A site is a distinct stack of return addresses; sites live in
 * mmap'd records published into an open-addressing index with a CAS, so finding or adding one
 * takes no lock. Site patterns (QAUDIT_QUEUE_SITES) are resolved once to address ranges from the
 * loaded modules' symbol tables, and again after each dlopen. */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <libunwind.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"

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
atomic_uint_fast64_t qa_sites_dropped, qa_stacks_truncated;

static uintptr_t self_lo, self_hi; /* this library's code: frames to skip */

/* This library's own extent, from linker-defined symbols bound locally (hidden), so no loader
 * call is needed on the allocation path. */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char _end[] __attribute__((visibility("hidden")));

static void sites_setup(void)
{
    sites = qa_mmap((size_t)MAX_SITES * sizeof *sites);
    site_index = qa_mmap((size_t)INDEX_SLOTS * sizeof *site_index);
    self_lo = (uintptr_t)__ehdr_start;
    self_hi = (uintptr_t)_end;
    atomic_store_explicit(&sites_ready, true, memory_order_release);
}

/* Every stack needs the tables: one load once they exist, pthread_once's call before. */
static void ensure_sites(void)
{
    if (!atomic_load_explicit(&sites_ready, memory_order_acquire))
        pthread_once(&sites_once, sites_setup);
}

static bool ours(void *ip)
{
    return (uintptr_t)ip >= self_lo && (uintptr_t)ip < self_hi;
}

/* The calling thread's stack, for a frame-pointer walk that never leaves it; found on the
 * thread's first walk (a fork's child keeps its thread's stack, and so these). */
static __thread uintptr_t stack_lo, stack_hi;

static void find_stack_bounds(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        stack_lo = (uintptr_t)addr;
        stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

/* Frames of the interposer itself come first and are not kept, so the walk writes the
 * program's frames straight into place. */
static int walk_frame_pointers(void **frames, unsigned max, bool *truncated)
{
    if (stack_hi == 0)
        find_stack_bounds();
    void **fp = __builtin_frame_address(0);
    int n = 0;
    for (;;) {
        uintptr_t at = (uintptr_t)fp;
        if (at < stack_lo || at + 16 > stack_hi || (at & 7))
            break;
        void *ret = fp[1];
        if (ret == NULL)
            break;
        if (n > 0 || !ours(ret)) {
            if ((unsigned)n == max) {
                *truncated = true;
                break;
            }
            frames[n++] = ret;
        }
        void **next = fp[0];
        if (next <= fp)
            break;
        fp = next;
    }
    return n;
}

/* glibc's fork does not reset the loader's module-list lock in the child, so a thread holding it
 * at the fork (inside dl_iterate_phdr, which libunwind calls for every stack, or inside dlopen or
 * dlclose) leaves the child deadlocked on its first stack. Natively a program seldom walks the
 * module list; with stacks on, every allocation does. So a thread counts, in its record, the
 * loader calls it is inside (qa_loader_enter/leave), and fork (qa_unwinds_block) raises a flag,
 * waits for every other thread's count to drop to zero and keeps new outermost calls out until
 * the fork is done. Sequentially consistent stores and loads on both sides: each side sees the
 * other's, so no call starts unseen. A nested call (a stack inside dlopen) goes on: its thread is
 * already counted, and fork is waiting for it. */
static atomic_bool fork_pending;

void qa_loader_enter(struct qa_thread *t)
{
    if (atomic_load_explicit(&t->unwinding, memory_order_relaxed) > 0) {
        atomic_fetch_add(&t->unwinding, 1);
        return;
    }
    for (;;) {
        atomic_store(&t->unwinding, 1);
        if (!atomic_load(&fork_pending))
            return;
        atomic_store(&t->unwinding, 0);
        while (atomic_load(&fork_pending))
            sched_yield();
    }
}

void qa_loader_leave(struct qa_thread *t)
{
    atomic_fetch_sub_explicit(&t->unwinding, 1, memory_order_release);
}

void qa_unwinds_block(void)
{
    atomic_store(&fork_pending, true);
    struct qa_thread *self = qa_self_if_registered();
    for (struct qa_thread *t = qa_threads_head(); t != NULL; t = t->next)
        while (t != self && atomic_load(&t->unwinding) > 0)
            sched_yield();
}

void qa_unwinds_unblock(void)
{
    atomic_store(&fork_pending, false);
}

/* Return addresses of the caller's stack, the interposer's own frames removed. Inlined (across
 * files, by the link-time optimiser) into the entry points that capture, so that the unwinder
 * starts one frame below the program's call instead of walking three frames of our own first:
 * about 250 of libunwind's 870 instructions per stack. */
__attribute__((always_inline)) inline int qa_capture(void **frames, unsigned max,
                                                     bool frame_pointers)
{
    ensure_sites();
    if (frame_pointers) {
        bool truncated = false;
        int depth = walk_frame_pointers(frames, max, &truncated);
        if (truncated)
            atomic_fetch_add_explicit(&qa_stacks_truncated, 1, memory_order_relaxed);
        return depth;
    }
    void *raw[QA_MAX_DEPTH + 8];
    unsigned want = max + 8 < QA_MAX_DEPTH + 8 ? max + 8 : QA_MAX_DEPTH + 8;
    struct qa_thread *t = qa_self_if_registered();
    if (t != NULL)
        qa_loader_enter(t);
    int n = unw_backtrace(raw, (int)want);
    if (t != NULL)
        qa_loader_leave(t);
    int skip = 0;
    while (skip < n && ours(raw[skip]))
        skip++;
    int depth = n - skip;
    if (depth > (int)max) {
        depth = (int)max;
        atomic_fetch_add_explicit(&qa_stacks_truncated, 1, memory_order_relaxed);
    }
    if (depth < 0)
        depth = 0;
    memcpy(frames, raw + skip, (size_t)depth * sizeof *frames);
    return depth;
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

uint32_t qa_site_for(void *const *frames, int depth)
{
    ensure_sites();
    if (sites == NULL || site_index == NULL)
        return 0;
    uint64_t hash = hash_frames(frames, depth);
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

void qa_site_alloc(struct qa_thread *t, uint32_t id, uint64_t size, bool queue)
{
    if (id == 0 || sites == NULL)
        return;
    struct qa_site_delta *d = delta_for(t, id);
    d->allocs++;
    d->bytes += size;
    d->queue_allocs += queue;
    d->live_bytes += (int64_t)size;
    if (qa_cfg.stacks == QA_STACKS_SAMPLED && qa_cfg.sample_by_bytes) { /* by count: N each */
        uint64_t allocs, bytes;
        qa_sample_weight(size, &allocs, &bytes);
        d->weight_allocs += allocs;
        d->weight_bytes += bytes;
    }
    if (d->live_bytes > d->live_peak)
        d->live_peak = d->live_bytes;
}

static atomic_uint_fast64_t never_written_unattributed;

void qa_site_free(struct qa_thread *t, uint32_t id, uint64_t size, uint64_t never_written,
                  bool temporary)
{
    if (id == 0 || sites == NULL) {
        atomic_fetch_add_explicit(&never_written_unattributed, never_written, memory_order_relaxed);
        return;
    }
    struct qa_site_delta *d = delta_for(t, id);
    d->frees++;
    d->live_bytes -= (int64_t)size;
    d->never_written += never_written;
    d->temporary += temporary;
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
    out->touched = out->allocs > 0 || out->frees > 0 || out->inherited_freed > 0;
    return out->touched || out->inherited_blocks > 0;
}

/* ---- site patterns ---- */

struct range {
    uintptr_t lo, hi;
    unsigned sets; /* bit QA_PATTERNS_QUEUE and/or QA_PATTERNS_FAIL */
};
static struct range ranges[QA_MAX_RANGES];
static atomic_size_t range_count;
static uintptr_t scanned_bases[256];
static size_t scanned_count;
static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;

struct pattern {
    unsigned set;
    char text[96];    /* as given */
    char mangled[96]; /* for a::b patterns: the Itanium-mangled run, e.g. St5deque */
    bool glob;
};
static struct pattern patterns[QA_MAX_PATTERNS];
static size_t pattern_count;

static unsigned active_sets;

bool qa_patterns_active(void)
{
    return active_sets & QA_PATTERNS_QUEUE;
}

/* "std::deque" -> "St5deque"; "ns::Queue" -> "2ns5Queue". */
static void mangle(const char *text, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    const char *part = text;
    while (*part && len + 8 < size) {
        const char *end = strstr(part, "::");
        size_t n = end ? (size_t)(end - part) : strlen(part);
        if (n == 3 && strncmp(part, "std", 3) == 0 && part == text) {
            memcpy(out + len, "St", 2);
            len += 2;
        } else {
            int k = snprintf(out + len, size - len, "%zu%.*s", n, (int)n, part);
            if (k < 0 || (size_t)k >= size - len)
                break;
            len += (size_t)k;
        }
        if (!end)
            break;
        part = end + 2;
    }
    out[len < size ? len : size - 1] = '\0';
}

static void load_pattern_list(const char *text, unsigned set)
{
    char list[1024];
    snprintf(list, sizeof list, "%s", text);
    char *save = NULL;
    for (char *p = strtok_r(list, ",", &save); p && pattern_count < QA_MAX_PATTERNS;
         p = strtok_r(NULL, ",", &save)) {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            continue;
        struct pattern *pat = &patterns[pattern_count++];
        pat->set = set;
        snprintf(pat->text, sizeof pat->text, "%s", p);
        pat->glob = strpbrk(p, "*?[") != NULL;
        if (strstr(p, "::"))
            mangle(p, pat->mangled, sizeof pat->mangled);
        active_sets |= set;
    }
}

static void load_patterns(void)
{
    load_pattern_list(qa_cfg.sites, QA_PATTERNS_QUEUE);
    load_pattern_list(qa_cfg.fail_site, QA_PATTERNS_FAIL);
}

/* The pattern sets a symbol name belongs to. */
static unsigned name_matches(const char *name)
{
    unsigned sets = 0;
    for (size_t i = 0; i < pattern_count; i++) {
        const struct pattern *p = &patterns[i];
        if ((p->glob ? fnmatch(p->text, name, 0) == 0 : strstr(name, p->text) != NULL) ||
            (p->mangled[0] && strstr(name, p->mangled)))
            sets |= p->set;
    }
    return sets;
}

static void add_range(uintptr_t lo, uintptr_t hi, unsigned sets)
{
    size_t n = atomic_load(&range_count);
    if (n >= QA_MAX_RANGES)
        return;
    ranges[n] = (struct range){lo, hi, sets};
    atomic_store_explicit(&range_count, n + 1, memory_order_release);
}

/* Reads the symbol tables of one ELF file and adds the functions whose names match. */
static void scan_symbols(const char *path, uintptr_t base)
{
    struct qa_file f;
    if (!qa_file_open(&f, path, O_RDONLY, 0))
        return;
    struct stat st;
    if (fstat(f.fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr) ||
        !qa_file_still_ours(&f)) {
        qa_file_close(&f);
        return;
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *file = mmap(NULL, size, PROT_READ, MAP_PRIVATE, f.fd, 0);
    bool mapped_ours = qa_file_still_ours(&f); /* the program may have put its file there */
    qa_file_close(&f);
    if (file == MAP_FAILED)
        return;
    if (!mapped_ours) {
        munmap((void *)file, size);
        return;
    }
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)file;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff == 0 || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size) {
        munmap((void *)file, size);
        return;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(file + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM)
            continue;
        if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_offset + sh[i].sh_size > size)
            continue;
        const Elf64_Shdr *strtab = &sh[sh[i].sh_link];
        if (strtab->sh_offset + strtab->sh_size > size)
            continue;
        const Elf64_Sym *syms = (const Elf64_Sym *)(file + sh[i].sh_offset);
        size_t count = sh[i].sh_size / sizeof *syms;
        const char *names = (const char *)file + strtab->sh_offset;
        for (size_t k = 0; k < count; k++) {
            if (ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC || syms[k].st_size == 0 ||
                syms[k].st_name >= strtab->sh_size || syms[k].st_shndx == SHN_UNDEF)
                continue;
            const char *name = names + syms[k].st_name;
            if (memchr(name, '\0', strtab->sh_size - syms[k].st_name) == NULL)
                continue;
            unsigned sets = name_matches(name);
            if (sets)
                add_range(base + syms[k].st_value, base + syms[k].st_value + syms[k].st_size, sets);
        }
    }
    munmap((void *)file, size);
}

static int scan_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    for (size_t i = 0; i < scanned_count; i++)
        if (scanned_bases[i] == info->dlpi_addr && info->dlpi_addr != 0)
            return 0;
    const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
    if (strstr(path, "linux-vdso") != NULL)
        return 0;
    if (scanned_count < sizeof scanned_bases / sizeof scanned_bases[0])
        scanned_bases[scanned_count++] = info->dlpi_addr;
    scan_symbols(path, info->dlpi_addr);
    return 0;
}

/* Called at start-up and after dlopen, never with a qaudit lock other than resolve_lock held. */
void qa_patterns_resolve(void)
{
    pthread_mutex_lock(&resolve_lock);
    static bool loaded;
    if (!loaded) {
        load_patterns();
        loaded = true;
    }
    if (pattern_count > 0)
        dl_iterate_phdr(scan_module, NULL);
    pthread_mutex_unlock(&resolve_lock);
}

/* Around fork: the patterns are not being resolved while the process forks (writer.c). */
void qa_patterns_hold(void)
{
    pthread_mutex_lock(&resolve_lock);
}

void qa_patterns_release(void)
{
    pthread_mutex_unlock(&resolve_lock);
}

bool qa_frames_match(void *const *frames, int depth, unsigned set)
{
    size_t n = atomic_load_explicit(&range_count, memory_order_acquire);
    for (int f = 0; f < depth; f++) {
        uintptr_t ip = (uintptr_t)frames[f] - 1; /* a return address points past the call */
        for (size_t r = 0; r < n; r++)
            if ((ranges[r].sets & set) && ip >= ranges[r].lo && ip < ranges[r].hi)
                return true;
    }
    return false;
}

bool qa_frames_match_patterns(void *const *frames, int depth)
{
    return qa_frames_match(frames, depth, QA_PATTERNS_QUEUE);
}

size_t qa_pattern_ranges(void);
size_t qa_pattern_ranges(void)
{
    return atomic_load(&range_count);
}

/* dlopen: forwarded, then the new module's symbols are scanned for the site patterns, and a
 * library loaded with RTLD_DEEPBIND is noted (its own malloc calls may bypass this preload). */
QA_EXPORT void *dlopen(const char *file, int flags)
{
    static void *(*next_dlopen)(const char *, int);
    if (next_dlopen == NULL)
        next_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    struct qa_thread *loader = atomic_load(&qa_ready) == 2 ? qa_self() : NULL;
    if (loader)
        qa_loader_enter(loader);
    void *handle = next_dlopen ? next_dlopen(file, flags) : NULL;
    if (loader)
        qa_loader_leave(loader);
    if (handle != NULL && atomic_load(&qa_ready) == 2) {
        struct qa_thread *t = qa_self();
        bool was_busy = t ? qa_guard(t) : true;
        if (flags & RTLD_DEEPBIND)
            qa_dump_note_deepbind(file ? file : "(main program)");
        qa_modules_changed();
        qa_patterns_resolve();
        if (t)
            qa_guard_restore(t, was_busy);
    }
    return handle;
}

/* dlclose: forwarded, then the module map a fatal dump would use is gathered again. */
QA_EXPORT int dlclose(void *handle)
{
    static int (*next_dlclose)(void *);
    if (next_dlclose == NULL)
        next_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    struct qa_thread *loader = atomic_load(&qa_ready) == 2 ? qa_self() : NULL;
    if (loader)
        qa_loader_enter(loader);
    int result = next_dlclose ? next_dlclose(handle) : -1;
    if (loader)
        qa_loader_leave(loader);
    if (atomic_load(&qa_ready) == 2) {
        struct qa_thread *t = qa_self();
        bool was_busy = t ? qa_guard(t) : true;
        qa_modules_changed();
        if (t)
            qa_guard_restore(t, was_busy);
    }
    return result;
}
