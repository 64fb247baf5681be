/* Writes the allocation dump (format qaudit-alloc/1, docs/dump-format.md) without calling malloc:
 * the module map is gathered first (dl_iterate_phdr takes the loader lock, so no qaudit lock is
 * held then), then under the dump lock the JSON goes to "<path>.tmp.<pid>.<n>", created with
 * O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600, and is renamed into place: a reader never sees half a
 * file. A failure is reported once on stderr and the process goes on. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

#define MAX_MODULES 128

struct module {
    char path[200];
    uintptr_t base, lo, hi;
    char build_id[41];
};

struct module_list {
    struct module items[MAX_MODULES];
    size_t count, dropped;
};

static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t sequence;
static atomic_int error_reported;
static pid_t first_pid;
static uint64_t start_ns;
static char deepbind[8][128];
static atomic_uint_fast32_t deepbind_count;

uint64_t qa_thread_total(void);
uint64_t qa_usable_overflow(void);
uint64_t qa_never_written_unattributed(void);
size_t qa_pattern_ranges(void);

void qa_dump_note_deepbind(const char *path)
{
    uint32_t i = (uint32_t)atomic_fetch_add(&deepbind_count, 1);
    if (i < 8)
        snprintf(deepbind[i], sizeof deepbind[i], "%s", path);
    qa_log("%s was loaded with RTLD_DEEPBIND: its own allocations may bypass qaudit", path);
}

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
                for (unsigned k = 0; k < nh->n_descsz && k < 20; k++)
                    snprintf(out + 2 * k, 3, "%02x", desc[k]);
                return;
            }
            note = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
}

static int collect_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct module_list *list = data;
    if (list->count == MAX_MODULES) {
        list->dropped++;
        return 0;
    }
    struct module *m = &list->items[list->count++];
    const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : NULL;
    if (path)
        snprintf(m->path, sizeof m->path, "%s", path);
    else {
        ssize_t n = readlink("/proc/self/exe", m->path, sizeof m->path - 1);
        m->path[n > 0 ? n : 0] = '\0';
    }
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

/* Expands %p (pid) and %n (sequence); a forked child whose pattern has no %p gets ".<pid>"
 * appended so it never overwrites its parent's file. */
static bool dump_path(char *out, size_t size, uint64_t n)
{
    const char *pattern = qa_cfg.out_pattern;
    pid_t pid = getpid();
    size_t len = 0;
    for (const char *p = pattern; *p && len + 24 < size; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            len += (size_t)snprintf(out + len, size - len, "%d", (int)pid);
            p++;
        } else if (p[0] == '%' && p[1] == 'n') {
            len += (size_t)snprintf(out + len, size - len, "%llu", (unsigned long long)n);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            out[len++] = '%';
            p++;
        } else {
            out[len++] = *p;
        }
    }
    out[len] = '\0';
    if (pid != first_pid && strstr(pattern, "%p") == NULL)
        snprintf(out + len, size - len, ".%d", (int)pid);
    return len + 24 < size;
}

static void write_process(struct qa_json *j, const char *reason, const struct module_list *modules)
{
    qa_json_key(j, "reason"), qa_json_str(j, reason);
    qa_json_key(j, "process");
    qa_json_begin_object(j);
    qa_json_key(j, "pid"), qa_json_i64(j, getpid());
    qa_json_key(j, "ppid"), qa_json_i64(j, getppid());
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    qa_json_key(j, "exe"), qa_json_str(j, exe);
    qa_json_key(j, "argv");
    qa_json_begin_array(j);
    char cmdline[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t len = fd >= 0 ? read(fd, cmdline, sizeof cmdline) : -1;
    if (fd >= 0)
        close(fd);
    for (ssize_t i = 0; i < len;) {
        size_t arg = strnlen(cmdline + i, (size_t)(len - i));
        qa_json_strn(j, cmdline + i, arg);
        i += (ssize_t)arg + 1;
    }
    qa_json_end_array(j);
    /* dl_iterate_phdr reports the main program first. */
    qa_json_key(j, "build_id"), qa_json_str(j, modules->count ? modules->items[0].build_id : "");
    uint64_t now = qa_now_ns();
    qa_json_key(j, "start_time_ns"), qa_json_u64(j, start_ns);
    qa_json_key(j, "dump_time_ns"), qa_json_u64(j, now);
    if (strcmp(reason, "exit") == 0)
        qa_json_key(j, "end_time_ns"), qa_json_u64(j, now);
    qa_json_end_object(j);
}

static void write_modules(struct qa_json *j, const struct module_list *modules)
{
    qa_json_key(j, "modules");
    qa_json_begin_array(j);
    for (size_t i = 0; i < modules->count; i++) {
        const struct module *m = &modules->items[i];
        qa_json_begin_object(j);
        qa_json_key(j, "path"), qa_json_str(j, m->path);
        qa_json_key(j, "base"), qa_json_hex(j, m->base);
        qa_json_key(j, "start"), qa_json_hex(j, m->lo);
        qa_json_key(j, "end"), qa_json_hex(j, m->hi);
        qa_json_key(j, "build_id"), qa_json_str(j, m->build_id);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
}

static const char *const call_names[QA_CALL_COUNT] = {
    "malloc",        "calloc",   "realloc", "reallocarray", "posix_memalign",
    "aligned_alloc", "memalign", "valloc",  "pvalloc",      "free"};

static void write_totals(struct qa_json *j)
{
    struct qa_counters c;
    uint64_t threads;
    qa_sum_counters(&c, &threads);
    qa_json_key(j, "totals");
    qa_json_begin_object(j);
    qa_json_key(j, "allocs"), qa_json_u64(j, qa_counters_allocs(&c));
    qa_json_key(j, "frees"), qa_json_u64(j, c.by_call[QA_FREE]);
    qa_json_key(j, "reallocs"), qa_json_u64(j, c.reallocs);
    qa_json_key(j, "reallocs_in_place"), qa_json_u64(j, c.realloc_in_place);
    qa_json_key(j, "reallocs_moved"), qa_json_u64(j, c.realloc_moved);
    qa_json_key(j, "aligned_allocs"), qa_json_u64(j, qa_counters_aligned(&c));
    qa_json_key(j, "failed_allocs"), qa_json_u64(j, c.failed);
    qa_json_key(j, "bytes_requested"), qa_json_u64(j, c.bytes_requested);
    qa_json_key(j, "bytes_usable"), qa_json_u64(j, c.bytes_usable);
    qa_json_key(j, "live_bytes"), qa_json_i64(j, qa_counters_live_bytes(&c));
    qa_json_key(j, "live_blocks"), qa_json_i64(j, qa_counters_live_blocks(&c));
    qa_json_key(j, "peak_live_bytes"), qa_json_i64(j, qa_peak_live());
    qa_json_key(j, "threads"), qa_json_u64(j, threads);
    qa_json_key(j, "calls");
    qa_json_begin_object(j);
    for (int i = 0; i < QA_CALL_COUNT; i++)
        qa_json_key(j, call_names[i]), qa_json_u64(j, c.by_call[i]);
    qa_json_end_object(j);
    qa_json_end_object(j);

    qa_json_key(j, "requested_sizes");
    qa_json_begin_array(j);
    for (unsigned b = 0; b < QA_SIZE_BUCKETS; b++) {
        if (c.size_hist[b] == 0)
            continue;
        qa_json_begin_object(j);
        qa_json_key(j, "from"), qa_json_u64(j, b == 0 ? 0 : qa_size_bucket_floor(b));
        qa_json_key(j, "to"), qa_json_u64(j, qa_size_bucket_floor(b + 1) - 1);
        qa_json_key(j, "count"), qa_json_u64(j, c.size_hist[b]);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);

    static size_t sizes[QA_USABLE_SLOTS];
    static uint64_t counts[QA_USABLE_SLOTS];
    size_t n = qa_usable_hist(sizes, counts, QA_USABLE_SLOTS);
    qa_json_key(j, "usable_sizes");
    qa_json_begin_array(j);
    for (size_t i = 0; i < n; i++) {
        qa_json_begin_object(j);
        qa_json_key(j, "usable"), qa_json_u64(j, sizes[i]);
        qa_json_key(j, "count"), qa_json_u64(j, counts[i]);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
}

static void write_sites(struct qa_json *j)
{
    qa_json_key(j, "sites");
    qa_json_begin_array(j);
    uint32_t n = qa_site_count();
    for (uint32_t id = 1; id < n; id++) {
        struct qa_site_view s;
        if (!qa_site_get(id, &s))
            continue;
        qa_json_begin_object(j);
        qa_json_key(j, "id"), qa_json_u64(j, s.id);
        qa_json_frames(j, s.frames, s.depth);
        qa_json_key(j, "allocs"), qa_json_u64(j, s.allocs);
        qa_json_key(j, "frees"), qa_json_u64(j, s.frees);
        qa_json_key(j, "bytes"), qa_json_u64(j, s.bytes);
        qa_json_key(j, "live_bytes"), qa_json_i64(j, (int64_t)s.live_bytes);
        qa_json_key(j, "peak_live_bytes"), qa_json_u64(j, s.peak_live_bytes);
        qa_json_key(j, "never_written_bytes"), qa_json_u64(j, s.never_written);
        qa_json_key(j, "queue_allocs"), qa_json_u64(j, s.queue_allocs);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
}

static void write_precision(struct qa_json *j, const struct module_list *modules)
{
    uint64_t blocks = atomic_load(&qa_blocks_dropped), sites = atomic_load(&qa_sites_dropped);
    uint64_t truncated = atomic_load(&qa_stacks_truncated), usable = qa_usable_overflow();
    uint32_t deep = (uint32_t)atomic_load(&deepbind_count);
    qa_json_key(j, "precision");
    qa_json_begin_object(j);
    qa_json_key(j, "exact");
    qa_json_bool(j, blocks == 0 && sites == 0 && usable == 0 && deep == 0 && modules->dropped == 0);
    qa_json_key(j, "counts_exact"), qa_json_bool(j, true);
    qa_json_key(j, "peak_live_bytes_within");
    qa_json_u64(j, qa_thread_total() <= 1 ? 0 : (qa_thread_total() - 1) * 64 * 1024);
    qa_json_key(j, "blocks_untracked"), qa_json_u64(j, blocks);
    qa_json_key(j, "sites_dropped"), qa_json_u64(j, sites);
    qa_json_key(j, "stacks_truncated"), qa_json_u64(j, truncated);
    qa_json_key(j, "usable_sizes_dropped"), qa_json_u64(j, usable);
    qa_json_key(j, "usable_sizes_from"), qa_json_str(j, qa_usable_source());
    qa_json_key(j, "modules_dropped"), qa_json_u64(j, modules->dropped);
    qa_json_key(j, "never_written_unattributed"), qa_json_u64(j, qa_never_written_unattributed());
    qa_json_key(j, "site_pattern_ranges"), qa_json_u64(j, qa_pattern_ranges());
    qa_json_key(j, "deepbind_libraries");
    qa_json_begin_array(j);
    for (uint32_t i = 0; i < deep && i < 8; i++)
        qa_json_str(j, deepbind[i]);
    qa_json_end_array(j);
    qa_json_end_object(j);
}

static void write_config(struct qa_json *j)
{
    static const char *const stacks[] = {"off", "sampled", "always", "fp", "queue"};
    qa_json_key(j, "config");
    qa_json_begin_object(j);
    qa_json_key(j, "stacks"), qa_json_str(j, stacks[qa_cfg.stacks]);
    qa_json_key(j, "sample_every"), qa_json_u64(j, qa_cfg.sample_every);
    qa_json_key(j, "stack_depth"), qa_json_u64(j, qa_cfg.depth);
    qa_json_key(j, "queue_sites"), qa_json_str(j, qa_cfg.sites);
    static const char *const poison[] = {"off", "all", "queue"};
    qa_json_key(j, "poison"), qa_json_str(j, poison[qa_cfg.poison]);
    static const char *const assert_modes[] = {"off", "report", "abort"};
    qa_json_key(j, "assert_depth1"), qa_json_str(j, assert_modes[qa_cfg.assert_depth1]);
    qa_json_key(j, "follow_exec"), qa_json_bool(j, qa_cfg.follow_exec);
    qa_json_key(j, "interval"), qa_json_u64(j, qa_cfg.interval);
    qa_json_end_object(j);
}

static void write_dump(struct qa_json *j, const char *reason, const struct module_list *modules)
{
    qa_json_begin_object(j);
    qa_json_key(j, "format"), qa_json_str(j, "qaudit-alloc/1");
    write_process(j, reason, modules);
    write_config(j);
    write_modules(j, modules);
    write_totals(j);
    write_sites(j);
    qa_queue_write(j);
    qa_queue_write_checks(j);
    qa_fault_write(j);
    write_precision(j, modules);
    qa_json_end_object(j);
    qa_json_raw(j, "\n", 1);
    qa_json_flush(j);
}

static void report_once(const char *path, const char *what, int error)
{
    if (atomic_exchange(&error_reported, 1) == 0)
        qa_log("cannot write the dump %s (%s: %s); the program goes on", path, what,
               strerror(error));
}

void qa_dump(enum qa_dump_reason reason)
{
    static const char *const reasons[] = {"exit", "signal", "interval", "request"};
    struct qa_thread *t = qa_self();
    bool was_busy = t ? qa_guard(t) : true;
    /* On this thread's stack (about 36 KB) and before the dump lock: dl_iterate_phdr takes the
     * loader lock, which must never be waited for while a qaudit lock is held. */
    struct module_list modules;
    modules.count = modules.dropped = 0;
    dl_iterate_phdr(collect_module, &modules);
    pthread_mutex_lock(&dump_lock);
    uint64_t n = atomic_fetch_add(&sequence, 1);
    char path[600], tmp[700];
    dump_path(path, sizeof path, n);
    snprintf(tmp, sizeof tmp, "%s.tmp.%d.%llu", path, (int)getpid(), (unsigned long long)n);
    static struct qa_json j;
    memset(&j, 0, offsetof(struct qa_json, buf));
    j.fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (j.fd < 0) {
        report_once(tmp, "open", errno);
    } else {
        write_dump(&j, reasons[reason], &modules);
        int error = j.failed ? errno : 0;
        if (close(j.fd) != 0 && !error)
            error = errno;
        if (error) {
            report_once(tmp, "write", error);
            unlink(tmp);
        } else if (rename(tmp, path) != 0) {
            report_once(path, "rename", errno);
            unlink(tmp);
        }
    }
    pthread_mutex_unlock(&dump_lock);
    if (t)
        qa_guard_restore(t, was_busy);
}

void qa_dump_started(void);
void qa_dump_started(void)
{
    first_pid = getpid();
    start_ns = qa_now_ns();
}

void qa_dump_lock(void);
void qa_dump_unlock(void);
void qa_dump_lock(void)
{
    pthread_mutex_lock(&dump_lock);
}
void qa_dump_unlock(void)
{
    pthread_mutex_unlock(&dump_lock);
}
