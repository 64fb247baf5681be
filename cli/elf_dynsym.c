/* The defined symbols of an ELF file's .dynsym, one at a time (elf_dynsym.h). */
#include "elf_dynsym.h"

#include <stddef.h>

bool dynsym_each(Elf *elf, bool (*visit)(const GElf_Sym *sym, const char *name, void *data),
                 void *data)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        Elf_Data *symbols;
        if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0 ||
            (symbols = elf_getdata(scn, NULL)) == NULL)
            continue;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            const char *name;
            if (gelf_getsym(symbols, (int)i, &sym) != NULL && sym.st_shndx != SHN_UNDEF &&
                (name = elf_strptr(elf, sh.sh_link, sym.st_name)) != NULL &&
                visit(&sym, name, data))
                return true;
        }
    }
    return false;
}
