/* Walking the defined symbols of an ELF file's .dynsym (libelf), for qaudit run's allocator shims
 * and qaudit snapshot's control record. */
#ifndef QAUDIT_CLI_ELF_DYNSYM_H
#define QAUDIT_CLI_ELF_DYNSYM_H

#include <gelf.h>
#include <stdbool.h>

/* Calls visit on each defined (not SHN_UNDEF) .dynsym symbol of elf, in order, until it returns
 * true; whether it did. */
bool dynsym_each(Elf *elf, bool (*visit)(const GElf_Sym *sym, const char *name, void *data),
                 void *data);

#endif
