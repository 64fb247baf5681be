/* No self-binding (issue 40): no call or data reference from inside libqaudit-preload.so goes
 * through a symbol the library itself exports. Such a reference binds, at load, to whatever comes
 * first in the lookup scope: preloaded, that is the preload's own interposer; attached (loaded
 * by qaudit attach with dlopen), the C library's. What runs would then depend on how the library
 * was loaded (records/sampling.c's dlopen and output/writer.c's syscall once did). The preload's
 * own calls go to base/real.c's qa_real table or to hidden bodies with exported aliases
 * (types.h, QA_EXPORT_AS).
 * Read from the file itself, as `readelf -r` would: every JUMP_SLOT (PLT) and GLOB_DAT (GOT)
 * relocation's symbol, against the dynamic symbols the library defines with default
 * visibility. Both builds (release and -DQA_DEBUG). */
#include <elf.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

struct elf_file {
    const unsigned char *data;
    size_t size;
};

static struct elf_file map_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fail_msg("cannot open %s", path);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    assert_true(data != MAP_FAILED);
    assert_true((size_t)st.st_size >= sizeof(Elf64_Ehdr));
    assert_memory_equal(data, ELFMAG, SELFMAG);
    assert_int_equal(((const Elf64_Ehdr *)data)->e_ident[EI_CLASS], ELFCLASS64);
    return (struct elf_file){data, (size_t)st.st_size};
}

static const Elf64_Shdr *section(const struct elf_file *f, unsigned index)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f->data;
    assert_true(index < eh->e_shnum);
    return (const Elf64_Shdr *)(f->data + eh->e_shoff + (size_t)index * eh->e_shentsize);
}

/* Symbol number index of the dynamic symbol table, and its name. */
static const Elf64_Sym *dynamic_symbol(const struct elf_file *f, const Elf64_Shdr *dynsym,
                                       size_t index, const char **name)
{
    assert_true((index + 1) * sizeof(Elf64_Sym) <= dynsym->sh_size);
    const Elf64_Sym *sym = (const Elf64_Sym *)(f->data + dynsym->sh_offset) + index;
    const Elf64_Shdr *strtab = section(f, dynsym->sh_link);
    *name = (const char *)(f->data + strtab->sh_offset + sym->st_name);
    return sym;
}

/* Defined here and visible from outside: a name the library exports. */
static bool exported(const Elf64_Sym *sym)
{
    unsigned bind = ELF64_ST_BIND(sym->st_info);
    return sym->st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
           ELF64_ST_VISIBILITY(sym->st_other) == STV_DEFAULT;
}

/* The exported names that a JUMP_SLOT or GLOB_DAT relocation refers to, one per line into out;
 * how many relocations there were of those kinds in all (so that a file without any is not
 * taken for a clean one). */
static size_t self_bound(const char *path, char *out, size_t size, size_t *slots)
{
    struct elf_file f = map_file(path);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f.data;
    size_t found = 0, used = 0;
    *slots = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *rela = section(&f, i);
        if (rela->sh_type != SHT_RELA)
            continue;
        const Elf64_Shdr *dynsym = section(&f, rela->sh_link);
        if (dynsym->sh_type != SHT_DYNSYM)
            continue;
        size_t n = rela->sh_size / sizeof(Elf64_Rela);
        const Elf64_Rela *r = (const Elf64_Rela *)(f.data + rela->sh_offset);
        for (size_t k = 0; k < n; k++) {
            unsigned type = ELF64_R_TYPE(r[k].r_info);
            if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
                continue;
            (*slots)++;
            const char *name;
            const Elf64_Sym *sym = dynamic_symbol(&f, dynsym, ELF64_R_SYM(r[k].r_info), &name);
            if (!exported(sym))
                continue;
            found++;
            int w = snprintf(out + used, size - used, "  %s (%s)\n", name,
                             type == R_X86_64_JUMP_SLOT ? "JUMP_SLOT" : "GLOB_DAT");
            if (w > 0 && (size_t)w < size - used)
                used += (size_t)w;
        }
    }
    munmap((void *)f.data, f.size);
    return found;
}

static void check_library(const char *path)
{
    char names[8192];
    size_t slots;
    size_t found = self_bound(path, names, sizeof names, &slots);
    assert_true(slots > 0); /* it does call the C library: the reading found its relocations */
    if (found != 0)
        fail_msg("%s refers to %zu of its own exported symbols through its PLT/GOT (a call from "
                 "inside that would reach the preload's interposer when preloaded and the C "
                 "library's when attached):\n%s",
                 path, found, names);
}

static void release_build_binds_nothing_of_its_own(void **state)
{
    (void)state;
    check_library(PRELOAD_PATH);
}

static void debug_build_binds_nothing_of_its_own(void **state)
{
    (void)state;
    check_library(PRELOAD_DEBUG_PATH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(release_build_binds_nothing_of_its_own),
        cmocka_unit_test(debug_build_binds_nothing_of_its_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
