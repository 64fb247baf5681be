/* Site patterns: QAUDIT_QUEUE_SITES (queue code) and QAUDIT_FAIL's site= resolved to address
 * ranges from the loaded modules' symbol tables (read from the files with <elf.h>; a::b names
 * matched in their mangled form), at start-up and again after each dlopen; a stack matches when
 * one of its frames lies in a range. Context: resolution at start-up and after dlopen (never
 * while a lock of ours is held: dl_iterate_phdr takes the loader's), matching on the slow path. */
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "records.h"

struct range {
    uintptr_t lo, hi;
    unsigned sets; /* bit QA_PATTERNS_QUEUE and/or QA_PATTERNS_FAIL */
};
static struct range ranges[QA_MAX_RANGES];
static atomic_size_t range_count QA_FORK_STATE;
static uintptr_t scanned_bases[256];
static size_t scanned_count;
static pthread_mutex_t resolve_lock QA_FORK_STATE = PTHREAD_MUTEX_INITIALIZER;

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

size_t qa_pattern_ranges(void)
{
    return atomic_load(&range_count);
}
