/* A loaded object's path, and whether it defines a dynamic symbol, looked up in its hash table in
 * memory (GNU, or SysV where there is none) rather than with dlsym: a lookup that fails leaves no
 * loader error message behind (dlsym's would be allocated now and freed by the program's next dl
 * call, a free the interposer never saw allocated), and nothing here allocates. Context: start-up
 * and after dlopen (under the guard); reads loaded objects' memory only. */
#include <elf.h>
#include <string.h>

#include "records.h"

struct tables {
    const ElfW(Sym) * symtab;
    const char *strtab;
    size_t strsz;
    const uint32_t *gnu_hash, *sysv_hash;
};

/* The loader rewrites most objects' dynamic entries to addresses; read-only ones (the vDSO's)
 * keep offsets from the load address. */
static uintptr_t address(const struct dl_phdr_info *info, ElfW(Addr) value)
{
    return value < info->dlpi_addr ? info->dlpi_addr + value : value;
}

static bool find_tables(const struct dl_phdr_info *info, struct tables *t)
{
    memset(t, 0, sizeof *t);
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    for (; dyn != NULL && dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            t->symtab = (const ElfW(Sym) *)address(info, dyn->d_un.d_ptr);
            break;
        case DT_STRTAB:
            t->strtab = (const char *)address(info, dyn->d_un.d_ptr);
            break;
        case DT_STRSZ:
            t->strsz = dyn->d_un.d_val;
            break;
        case DT_GNU_HASH:
            t->gnu_hash = (const uint32_t *)address(info, dyn->d_un.d_ptr);
            break;
        case DT_HASH:
            t->sysv_hash = (const uint32_t *)address(info, dyn->d_un.d_ptr);
            break;
        }
    }
    return t->symtab && t->strtab && (t->gnu_hash || t->sysv_hash);
}

static bool matches(const struct tables *t, uint32_t index, const char *name)
{
    const ElfW(Sym) *s = &t->symtab[index];
    if (s->st_name >= t->strsz || s->st_shndx == SHN_UNDEF)
        return false;
    unsigned type = ELF64_ST_TYPE(s->st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT)
        return false;
    return strcmp(t->strtab + s->st_name, name) == 0;
}

static uint32_t gnu_hash(const char *name)
{
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    return h;
}

static bool gnu_lookup(const struct tables *t, const char *name)
{
    const uint32_t *ht = t->gnu_hash;
    uint32_t nbuckets = ht[0], symoffset = ht[1], bloom_size = ht[2];
    if (nbuckets == 0)
        return false;
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(ht + 4) + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t h = gnu_hash(name);
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return false;
    for (;; i++) {
        uint32_t link = chain[i - symoffset];
        if ((link | 1) == (h | 1) && matches(t, i, name))
            return true;
        if (link & 1)
            return false;
    }
}

static uint32_t sysv_hash(const char *name)
{
    uint32_t h = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        h = (h << 4) + *c;
        uint32_t g = h & 0xf0000000u;
        h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

static bool sysv_lookup(const struct tables *t, const char *name)
{
    uint32_t nbucket = t->sysv_hash[0], nchain = t->sysv_hash[1];
    if (nbucket == 0)
        return false;
    const uint32_t *bucket = t->sysv_hash + 2, *chain = bucket + nbucket;
    uint32_t steps = 0;
    for (uint32_t i = bucket[sysv_hash(name) % nbucket]; i != STN_UNDEF && i < nchain;
         i = chain[i]) {
        if (matches(t, i, name))
            return true;
        if (++steps > nchain)
            return false; /* a broken chain */
    }
    return false;
}

void qa_object_path(const struct dl_phdr_info *info, char *out, size_t size)
{
    /* The main program has no name in the link map: its executable's path. */
    const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : qa_exe_path();
    size_t n = strnlen(path, size - 1);
    memcpy(out, path, n);
    out[n] = '\0';
}

bool qa_object_defines(const struct dl_phdr_info *info, const char *name)
{
    struct tables t;
    if (!find_tables(info, &t))
        return false;
    return t.gnu_hash ? gnu_lookup(&t, name) : sysv_lookup(&t, name);
}
