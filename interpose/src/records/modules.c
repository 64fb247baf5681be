/* The module map a dump carries (path, load bias, extent, build id of every loaded object).
 * dl_iterate_phdr takes the loader's lock, which a dump written from a fatal signal handler must
 * never wait for (the crash may have happened inside the loader). So the map is gathered at
 * start-up, after every dlopen/dlclose and by every ordinary dump (which holds the lock until it
 * has written), into one of two static copies, so that the current one stays whole while the
 * other is rewritten; a fatal dump reads the current one without a lock. */
#include <elf.h>
#include <stddef.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "records.h"

static struct qa_module_list copies[2];
static atomic_int current = -1; /* index of the whole copy, -1 before the first gathering */
static pthread_mutex_t gather_lock QA_FORK_STATE = PTHREAD_MUTEX_INITIALIZER;

static void build_id_hex(const struct dl_phdr_info *info, char *out)
{
    out[0] = '\0';
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *note = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = note + ph->p_memsz;
        while (note + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)note;
            const char *name = note + sizeof *nh;
            const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
                static const char hex[] = "0123456789abcdef";
                for (unsigned k = 0; k < nh->n_descsz && k < 20; k++) {
                    out[2 * k] = hex[desc[k] >> 4];
                    out[2 * k + 1] = hex[desc[k] & 15];
                    out[2 * k + 2] = '\0';
                }
                return;
            }
            note = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
}

static int collect_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct qa_module_list *list = data;
    if (list->count == QA_MAX_MODULES) {
        list->dropped++;
        return 0;
    }
    struct qa_module *m = &list->items[list->count++];
    const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
    if (path)
        snprintf(m->path, sizeof m->path, "%s", path);
    else
        snprintf(m->path, sizeof m->path, "%s", qa_exe_path());
    m->base = info->dlpi_addr;
    m->lo = UINTPTR_MAX;
    m->hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        m->lo = lo < m->lo ? lo : m->lo;
        m->hi = hi > m->hi ? hi : m->hi;
    }
    build_id_hex(info, m->build_id);
    return 0;
}

/* The loader's counts of objects loaded and unloaded so far (every dl_phdr_info carries them):
 * while they stay the same, the map gathered last is still the map. A forked child (the fork loop
 * of a prefork server) then writes its dump without rewriting 35 KB of copies, page by page
 * copied on write. */
struct loader_counts {
    unsigned long long adds, subs;
};

static int read_counts(struct dl_phdr_info *info, size_t size, void *data)
{
    struct loader_counts *counts = data;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        return 1; /* an old loader without the counts: always gather */
    counts->adds = info->dlpi_adds;
    counts->subs = info->dlpi_subs;
    return 1;
}

static struct loader_counts gathered_at = {~0ull, ~0ull};

static void gather(void)
{
    struct loader_counts now = {~0ull - 1, ~0ull - 1};
    dl_iterate_phdr(read_counts, &now);
    if (atomic_load(&current) >= 0 && now.adds == gathered_at.adds && now.subs == gathered_at.subs)
        return;
    gathered_at = now;
    int spare = atomic_load(&current) == 0 ? 1 : 0;
    struct qa_module_list *list = &copies[spare];
    list->count = list->dropped = 0;
    dl_iterate_phdr(collect_module, list);
    atomic_store_explicit(&current, spare, memory_order_release);
}

/* After dlopen/dlclose. Only tries the lock: a thread inside a nested dlopen holds the loader's
 * lock, and a dump thread holding gather_lock may be waiting for it. A refresh skipped here is
 * made by the next ordinary dump, which always gathers first. */
void qa_modules_changed(void)
{
    if (pthread_mutex_trylock(&gather_lock) != 0)
        return;
    gather();
    pthread_mutex_unlock(&gather_lock);
}

/* A fresh map for an ordinary dump, which holds the lock until it has written the dump
 * (qa_modules_release): no other gathering can rewrite the map meanwhile. */
const struct qa_module_list *qa_modules_hold_fresh(void)
{
    pthread_mutex_lock(&gather_lock);
    gather();
    return qa_modules_current();
}

/* The last whole map, or NULL before the first: for a dump from a fatal signal, which may take
 * no lock. Async-signal-safe. */
const struct qa_module_list *qa_modules_current(void)
{
    int i = atomic_load_explicit(&current, memory_order_acquire);
    return i < 0 ? NULL : &copies[i];
}

/* Around fork (dump.c): the map is not being gathered while the process forks. */
void qa_modules_hold(void)
{
    pthread_mutex_lock(&gather_lock);
}

void qa_modules_release(void)
{
    pthread_mutex_unlock(&gather_lock);
}
