/* The C library's and the dynamic loader's code: a malloc called from there may come with one of
 * their locks held (the loader's during dlopen or a TLS allocation, the thread list's during
 * pthread_create), so a forked child starts its lazy writer thread (output/writer.c) only from a
 * call made elsewhere. Found once, at start-up; a forked child inherits it.
 * Context: qa_runtime_code_find at start-up (the loader's lock is taken: no qaudit lock may be
 * held); qa_runtime_code_holds anywhere. */
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base.h"

struct code_range {
    uintptr_t start, end;
};

/* The C library's executable segment, then the loader's; empty until found. */
static struct code_range ranges[2];

struct search {
    uintptr_t libc_pc;     /* an address in the C library's code */
    uintptr_t loader_base; /* the loader's load address (AT_BASE) */
};

/* The executable segment of an object that holds the C library or is the loader. */
static int note_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const struct search *s = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        struct code_range r = {info->dlpi_addr + ph->p_vaddr,
                               info->dlpi_addr + ph->p_vaddr + ph->p_memsz};
        if (s->libc_pc >= r.start && s->libc_pc < r.end)
            ranges[0] = r;
        else if (s->loader_base != 0 && info->dlpi_addr == s->loader_base)
            ranges[1] = r;
    }
    return 0;
}

void qa_runtime_code_find(void)
{
    struct search s = {(uintptr_t)&getpid, (uintptr_t)getauxval(AT_BASE)};
    dl_iterate_phdr(note_object, &s);
}

bool qa_runtime_code_holds(uintptr_t pc)
{
    for (int i = 0; i < 2; i++)
        if (pc >= ranges[i].start && pc < ranges[i].end)
            return true;
    return false;
}
