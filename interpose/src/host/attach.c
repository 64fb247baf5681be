/* qaudit attach, inside the process: the preload was loaded late (dlopen, by the qaudit command
 * through ptrace), after every module had bound its allocator. So each module's GOT entries of
 * the malloc family (and qaudit_hook's, NULL in a server built with the hooks header) are
 * redirected to the preload, and restored at detach; modules loaded later are redirected when
 * the writer thread sees the loader's count of loads move (at most QA_REQUEST_POLL_MS later).
 * The moment counting started is the inheritance's (records/inherited.c): blocks allocated
 * before are unknown, and the own-block map tells their frees.
 * Context: qa_attach_begin runs in the thread qaudit attach borrowed, the program's other
 * threads stopped; the rescan and the restore in the writer thread. Nothing here allocates. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "host.h"
#include "qaudit/control.h"
#include "qaudit/hooks.h"

/* What is redirected: the name a module binds, the preload's definition, the one the program
 * reached before (RTLD_DEFAULT; NULL for the weak hook). only_in: a module whose path contains
 * it (libunwind's descriptors, host/unwinder_fds.c), or NULL for every module. */
struct target {
    const char *name;
    const char *only_in;
    uintptr_t ours, before;
};

static struct target targets[] = {
    {"malloc", NULL, 0, 0},
    {"free", NULL, 0, 0},
    {"calloc", NULL, 0, 0},
    {"realloc", NULL, 0, 0},
    {"reallocarray", NULL, 0, 0},
    {"posix_memalign", NULL, 0, 0},
    {"aligned_alloc", NULL, 0, 0},
    {"memalign", NULL, 0, 0},
    {"valloc", NULL, 0, 0},
    {"pvalloc", NULL, 0, 0},
    {"malloc_usable_size", NULL, 0, 0},
    {"qaudit_hook", NULL, 0, 0},
    /* the ways an image ends, signals, chroot and the loader: as under LD_PRELOAD */
    {"_exit", NULL, 0, 0},
    {"_Exit", NULL, 0, 0},
    {"execve", NULL, 0, 0},
    {"execv", NULL, 0, 0},
    {"execvp", NULL, 0, 0},
    {"execvpe", NULL, 0, 0},
    {"execl", NULL, 0, 0},
    {"execle", NULL, 0, 0},
    {"execlp", NULL, 0, 0},
    {"fexecve", NULL, 0, 0},
    {"execveat", NULL, 0, 0},
    {"sigaction", NULL, 0, 0},
    {"signal", NULL, 0, 0},
    {"bsd_signal", NULL, 0, 0},
    {"sysv_signal", NULL, 0, 0},
    {"chroot", NULL, 0, 0},
    {"prctl", NULL, 0, 0},
    {"dlopen", NULL, 0, 0},
    {"dlclose", NULL, 0, 0},
    {"pipe2", "libunwind", 0, 0},
    {"read", "libunwind", 0, 0},
    {"syscall", "libunwind", 0, 0},
};
#define TARGETS (sizeof targets / sizeof targets[0])

/* qaudit/control.h: what the attach could not do as asked, read by the command after the call.
 * Written only by the attach's own call, the program's other threads stopped. */
static char notes[QAUDIT_ATTACH_NOTES_MAX];
/* Exported for the command; the preload's own code writes notes, bound at link time. */
extern char qaudit_attach_notes[QAUDIT_ATTACH_NOTES_MAX] QA_EXPORT_AS(notes);

void qa_attach_notes_clear(void)
{
    notes[0] = '\0';
}

/* One line of the notes (formatted without malloc); a line that does not fit is cut. */
void qa_attach_note(const char *fmt, ...)
{
    size_t used = strlen(notes), room = sizeof notes - used;
    if (room < 2)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(notes + used, room - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    used += (size_t)n < room - 1 ? (size_t)n : room - 2;
    notes[used] = '\n';
    notes[used + 1] = '\0';
}

/* Each redirected entry and what it held, for the restore. */
struct slot {
    uintptr_t *at;
    uintptr_t original;
};
#define SLOTS_MAX 32768
static struct slot *slots;
static size_t slot_count;
static pthread_mutex_t slots_lock QA_FORK_STATE = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long loads_seen;
static unsigned hook_slots; /* qaudit_hook_slot instances filled in */
static bool active;

/* Whether the list LD_PRELOAD names (separated by ':' or spaces) names a file of this name (its
 * last component). A whole entry is compared: loaded from a memfd, this file's name is a
 * descriptor number, which a substring of any path could hold. */
static bool preload_list_names(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *entry = list; entry != NULL && *entry != '\0';) {
        size_t len = strcspn(entry, ": ");
        const char *last = entry;
        for (const char *c = entry; c < entry + len; c++)
            if (*c == '/')
                last = c + 1;
        if ((size_t)(entry + len - last) == n && strncmp(last, name, n) == 0)
            return true;
        entry += len + (entry[len] != '\0');
    }
    return false;
}

/* Started under LD_PRELOAD (the variable names this file, as it did when the loader read it at
 * start-up; or this preload's malloc is the one the program reaches), or loaded later by
 * qaudit attach. */
bool qa_attach_loaded_late(void)
{
    Dl_info self, first;
    if (!dladdr((void *)qa_attach_loaded_late, &self))
        return false;
    const char *name = strrchr(self.dli_fname, '/');
    if (preload_list_names(getenv("LD_PRELOAD"), name ? name + 1 : self.dli_fname))
        return false;
    void *found = dlsym(RTLD_DEFAULT, "malloc");
    return found != NULL && dladdr(found, &first) && self.dli_fbase != first.dli_fbase;
}

/* Loaded from a memfd (qaudit attach, when the process's user cannot read the file): the loader
 * names this library by a descriptor the command closed since, whose number the program may
 * reuse. Every reader of the link map (the dump's module map, dladdr, the site patterns' symbol
 * scan, a debugger) is given the file's path instead (QAUDIT_ATTACH_LIBRARY in the settings):
 * one pointer store, the loader's own string left as it was. The library is loaded
 * RTLD_NODELETE, so the loader never frees the name. Before anything reads the link map. */
void qa_attach_name_self(const char *settings)
{
    static const char key[] = "QAUDIT_ATTACH_LIBRARY=";
    static char path[QA_PATH_MAX];
    const char *given = NULL;
    for (const char *p = settings; *p != '\0'; p += strlen(p) + 1)
        if (strncmp(p, key, sizeof key - 1) == 0)
            given = p + sizeof key - 1;
    struct link_map *self = NULL;
    Dl_info info;
    if (given == NULL || given[0] != '/' || strlen(given) >= sizeof path ||
        !dladdr1((void *)qa_attach_name_self, &info, (void **)&self, RTLD_DL_LINKMAP) ||
        self == NULL || strncmp(self->l_name, "/proc/self/fd/", 14) != 0)
        return;
    memcpy(path, given, strlen(given) + 1);
    __atomic_store_n(&self->l_name, path, __ATOMIC_RELEASE);
}

/* The preload's own definitions, looked up in its own handle (a reference to malloc from here
 * would bind to the program's, which comes first). */
static bool resolve_targets(void)
{
    Dl_info self;
    if (!dladdr((void *)resolve_targets, &self))
        return false;
    /* the loader's dlopen and dlclose (base/real.c), not the preload's own exported ones */
    void *handle =
        qa_real.dlopen_fn ? qa_real.dlopen_fn(self.dli_fname, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (handle == NULL)
        return false;
    for (size_t i = 0; i < TARGETS; i++) {
        targets[i].ours = (uintptr_t)dlsym(handle, targets[i].name);
        targets[i].before = (uintptr_t)dlsym(RTLD_DEFAULT, targets[i].name);
        /* RTLD_DEFAULT also searches the preload's own scope (it was loaded RTLD_LOCAL): what
         * it finds only there (qaudit_hook) the program had none of, its entries hold NULL. */
        if (targets[i].ours == targets[i].before)
            targets[i].before = 0;
    }
    if (qa_real.dlclose_fn)
        qa_real.dlclose_fn(handle); /* only the reference RTLD_NOLOAD took */
    return targets[0].ours != 0;
}

/* One 8-byte store into a GOT entry. A RELRO page is read-only once the loader is done with it:
 * whether this one is, is asked by writing the value it already holds with process_vm_writev
 * (which fails on a read-only page instead of faulting); only then is it made writable for the
 * store and read-only again, so a page the loader is still relocating is left as it was. */
static bool store_entry(uintptr_t *at, uintptr_t value)
{
    uintptr_t same = __atomic_load_n(at, __ATOMIC_RELAXED);
    struct iovec local = {&same, sizeof same}, remote = {at, sizeof same};
    if (process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof same) {
        __atomic_store_n(at, value, __ATOMIC_RELEASE);
        return true;
    }
    uintptr_t page = (uintptr_t)at & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
    if (mprotect((void *)page, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE) != 0)
        return false;
    __atomic_store_n(at, value, __ATOMIC_RELEASE);
    mprotect((void *)page, (size_t)sysconf(_SC_PAGESIZE), PROT_READ);
    return true;
}

/* A module's relocation tables, from its dynamic section (addresses there are relocated by the
 * loader, except in objects it does not relocate, such as the vDSO: those are made absolute). */
struct module {
    uintptr_t base, lo, hi;
    const char *path;
    const ElfW(Sym) * symtab;
    const char *strtab;
    const ElfW(Rela) * rela, *jmprel;
    size_t rela_count, jmprel_count;
};

static uintptr_t absolute(const struct module *m, uintptr_t address)
{
    return address < m->base ? address + m->base : address;
}

static bool read_module(const struct dl_phdr_info *info, struct module *m)
{
    memset(m, 0, sizeof *m);
    m->base = info->dlpi_addr;
    m->path = info->dlpi_name ? info->dlpi_name : "";
    m->lo = UINTPTR_MAX;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(m->base + ph->p_vaddr);
        if (ph->p_type == PT_LOAD) {
            uintptr_t lo = m->base + ph->p_vaddr, hi = lo + ph->p_memsz;
            m->lo = lo < m->lo ? lo : m->lo;
            m->hi = hi > m->hi ? hi : m->hi;
        }
    }
    if (dyn == NULL || strstr(m->path, "linux-vdso") != NULL)
        return false;
    size_t relasz = 0, pltsz = 0;
    bool plt_rela = true;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t v = dyn->d_un.d_ptr;
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            m->symtab = (const ElfW(Sym) *)absolute(m, v);
            break;
        case DT_STRTAB:
            m->strtab = (const char *)absolute(m, v);
            break;
        case DT_RELA:
            m->rela = (const ElfW(Rela) *)absolute(m, v);
            break;
        case DT_RELASZ:
            relasz = dyn->d_un.d_val;
            break;
        case DT_JMPREL:
            m->jmprel = (const ElfW(Rela) *)absolute(m, v);
            break;
        case DT_PLTRELSZ:
            pltsz = dyn->d_un.d_val;
            break;
        case DT_PLTREL:
            plt_rela = dyn->d_un.d_val == DT_RELA;
            break;
        }
    }
    m->rela_count = m->rela ? relasz / sizeof(ElfW(Rela)) : 0;
    m->jmprel_count = m->jmprel && plt_rela ? pltsz / sizeof(ElfW(Rela)) : 0;
    return m->symtab != NULL && m->strtab != NULL;
}

/* The target a relocation binds, or NULL. */
static struct target *target_of(const struct module *m, const ElfW(Rela) * r)
{
    unsigned type = ELF64_R_TYPE(r->r_info);
    size_t sym = ELF64_R_SYM(r->r_info);
    if (sym == 0 ||
        (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_64))
        return NULL;
    const char *name = m->strtab + m->symtab[sym].st_name;
    for (size_t i = 0; i < TARGETS; i++)
        if (targets[i].ours != 0 && strcmp(name, targets[i].name) == 0)
            return targets[i].only_in == NULL || strstr(m->path, targets[i].only_in) != NULL
                       ? &targets[i]
                       : NULL;
    return NULL;
}

/* Redirects one entry when it holds what the program reached, or (a lazily bound PLT entry) an
 * address inside its own module; an entry the program or another tool set otherwise is left. */
static void redirect(const struct module *m, const ElfW(Rela) * r, const struct target *t)
{
    uintptr_t *at = (uintptr_t *)(m->base + r->r_offset);
    uintptr_t now = __atomic_load_n(at, __ATOMIC_ACQUIRE);
    if (now == t->ours)
        return;
    bool lazy = ELF64_R_TYPE(r->r_info) == R_X86_64_JUMP_SLOT && now >= m->lo && now < m->hi;
    if (now != t->before && !lazy) {
        qa_inherited.entries_left_alone++;
        return;
    }
    if (slot_count == SLOTS_MAX) { /* not redirected: said as left alone */
        qa_inherited.entries_left_alone++;
        return;
    }
    if (store_entry(at, t->ours))
        slots[slot_count++] = (struct slot){at, now};
}

/* Puts back what an entry held before the attach (the program's own definition if it was
 * redirected after an earlier restore the table no longer holds). Only modules loaded now are
 * visited, so an entry of a module unloaded meanwhile is never written. */
static void restore(const struct module *m, const ElfW(Rela) * r, const struct target *t)
{
    uintptr_t *at = (uintptr_t *)(m->base + r->r_offset);
    if (__atomic_load_n(at, __ATOMIC_ACQUIRE) != t->ours)
        return;
    uintptr_t original = t->before;
    for (size_t i = 0; i < slot_count; i++)
        if (slots[i].at == at) {
            original = slots[i].original;
            break;
        }
    store_entry(at, original);
}

/* ---- qaudit_hook_slot (qaudit/hooks.h, header version 2) ---- */
/* The hook slots of a module: in its initialised writable data (the slot's magic is not zero, so
 * it is never in .bss), 16-byte aligned. Each one holding from (NULL at attach, the preload's
 * hook at detach) gets to. A few hundred KiB of data a module at most, read once per attach. */
static unsigned fill_hook_slots(const struct dl_phdr_info *info, uintptr_t from, uintptr_t to)
{
    static const char magic[16] = QAUDIT_HOOK_SLOT_MAGIC;
    unsigned filled = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        uintptr_t at = (info->dlpi_addr + ph->p_vaddr + 15) & ~(uintptr_t)15;
        uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
        for (; at + sizeof(struct qaudit_hook_slot) <= end; at += 16) {
            struct qaudit_hook_slot *slot = (struct qaudit_hook_slot *)at;
            if (memcmp(slot->magic, magic, sizeof magic) != 0 || (uintptr_t)slot->hook != from)
                continue;
            slot->hook = (void (*)(const struct qaudit_event *))to;
            filled++;
        }
    }
    return filled;
}

static uintptr_t our_hook(void)
{
    for (size_t i = 0; i < TARGETS; i++)
        if (strcmp(targets[i].name, "qaudit_hook") == 0)
            return targets[i].ours;
    return 0;
}

/* A symbol the module binds that is not redirected: an allocator's own entry point (jemalloc's
 * mallocx, its C++ operators...) is counted as one the attach does not reach. */
static void note_binding(const struct module *m, const ElfW(Rela) * r)
{
    unsigned type = ELF64_R_TYPE(r->r_info);
    size_t sym = ELF64_R_SYM(r->r_info);
    if (sym == 0 ||
        (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_64))
        return;
    uintptr_t value = __atomic_load_n((uintptr_t *)(m->base + r->r_offset), __ATOMIC_RELAXED);
    bool unresolved = type == R_X86_64_JUMP_SLOT && value >= m->lo && value < m->hi;
    qa_allocators_binding(m->path, m->strtab + m->symtab[sym].st_name, value, unresolved);
}

static int visit_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    void (*action)(const struct module *, const ElfW(Rela) *, const struct target *) = data;
    struct module m;
    if (!read_module(info, &m))
        return 0;
    bool attaching = action == redirect;
    uintptr_t hook = our_hook();
    if (hook != 0)
        hook_slots += attaching ? fill_hook_slots(info, 0, hook) : fill_hook_slots(info, hook, 0);
    for (size_t i = 0; i < m.rela_count + m.jmprel_count; i++) {
        const ElfW(Rela) *r = i < m.rela_count ? &m.rela[i] : &m.jmprel[i - m.rela_count];
        struct target *t = target_of(&m, r);
        if (t != NULL)
            action(&m, r, t);
        else if (attaching)
            note_binding(&m, r);
    }
    return 0;
}

static int count_loads(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

static unsigned long long loads_now(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(count_loads, &adds);
    return adds;
}

/* The caller holds slots_lock. Every walk of the loader's module list here is under that lock,
 * which fork takes first (qa_attach_before_fork): glibc's fork does not reset the list's lock in
 * the child, so a walk the fork cut in two would leave it taken there for ever (a prefork child
 * of an attached server hung in its exit dump). */
static void redirect_all_locked(void)
{
    loads_seen = loads_now();
    qa_inherited.entries_left_alone = 0; /* every module is visited again: counted afresh */
    qa_allocators_bindings_begin();
    dl_iterate_phdr(visit_module, (void *)redirect);
}

/* The writer thread, every poll, and the program's dlopen once it has returned: modules loaded
 * since are redirected too. */
static void rescan(void)
{
    pthread_mutex_lock(&slots_lock);
    bool moved = active && loads_now() != loads_seen;
    if (moved)
        redirect_all_locked();
    pthread_mutex_unlock(&slots_lock);
    if (moved)
        qa_control_attach_state(QAUDIT_ATTACH_ACTIVE, qa_inherited.attached_at_ns,
                                (uint32_t)(slot_count + hook_slots));
}

bool qa_attach_before_fork(void)
{
    if (slots == NULL) /* never attached: no walk to wait for, and the lock's page stays clean */
        return false;
    pthread_mutex_lock(&slots_lock);
    return true;
}

void qa_attach_after_fork(void)
{
    pthread_mutex_unlock(&slots_lock);
}

void qa_attach_module_loaded(void)
{
    rescan();
}

/* The writer thread, at detach: the program's signal dispositions back, every entry back, then
 * nothing more is counted or written. */
QA_CTX_WRITER static void restore_all(void)
{
    qa_assert_on_writer();
    qa_signals_restore();
    pthread_mutex_lock(&slots_lock);
    active = false;
    dl_iterate_phdr(visit_module, (void *)restore);
    slot_count = 0;
    hook_slots = 0;
    pthread_mutex_unlock(&slots_lock);
    qa_inert = true;
    qa_control_attach_state(QAUDIT_ATTACH_DETACHED, qa_inherited.attached_at_ns, 0);
}

bool qa_attach_active(void)
{
    return active;
}

/* The allocators' entry points the attach does not reach, into the notes qaudit attach prints. */
static void say_unreached(void)
{
    char line[QAUDIT_ATTACH_NOTES_MAX];
    for (unsigned f = 0; f < QAUDIT_FAMILIES; f++)
        if (qa_allocators_unreached(f, line, sizeof line))
            qa_attach_note("%s", line);
    for (unsigned i = 0; qa_unreachable_text(i, line, sizeof line); i++)
        qa_attach_note("%s", line);
}

int qa_attach_begin(void)
{
    if (slots == NULL && (slots = qa_mmap(SLOTS_MAX * sizeof *slots)) == NULL)
        return -ENOMEM;
    if (!resolve_targets())
        return -ENOENT;
    if (qa_inherited.attached_at_ns != 0) /* an earlier attach's totals: a new account */
        qa_stats_reset_for_attach();
    qa_inherited_attach(qa_now_ns()); /* before any call reaches the preload */
    /* Records mapped before (this thread's, during start-up; an earlier attach's) mark their
     * blocks too. The program's threads are stopped: none is inside a call of the preload. */
    for (struct qa_thread *t = qa_threads_head(); t != NULL; t = t->next)
        t->gate |= QA_GATE_FORKED;
    qa_inert = false;
    active = true;
    qa_writer_attached(rescan, restore_all);
    pthread_mutex_lock(&slots_lock);
    redirect_all_locked();
    pthread_mutex_unlock(&slots_lock);
    qa_signals_install(); /* the other threads are stopped: none is inside sigaction */
    say_unreached();
    qa_control_attach_state(QAUDIT_ATTACH_ACTIVE, qa_inherited.attached_at_ns,
                            (uint32_t)(slot_count + hook_slots));
    return (int)(slot_count + hook_slots);
}
