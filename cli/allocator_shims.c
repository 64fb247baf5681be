/* qaudit run: the allocator shims a program needs. A shim (libqaudit-jemalloc.so, ...) exports
 * its allocator's own names, so it is preloaded only when the program loads that allocator: when
 * one of the objects the loader maps for it (its DT_NEEDED closure and the user's LD_PRELOAD, as
 * the system loader's --list names them, which runs none of the program's code) defines the
 * allocator's marker symbol. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "elf_dynsym.h"

static const struct {
    const char *name, *marker, *shim;
} families[] = {
    {"jemalloc", "mallocx", "libqaudit-jemalloc.so"},
    {"tcmalloc", "tc_malloc", "libqaudit-tcmalloc.so"},
    {"mimalloc", "mi_malloc", "libqaudit-mimalloc.so"},
};
#define FAMILIES (sizeof families / sizeof families[0])
#define SHIM_MARKER "__qaudit_shim_v1"

/* The loader qaudit itself runs under: the system's, whatever interpreter the program names. */
static int find_interp(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_INTERP)
            snprintf(data, PATH_MAX, "%s",
                     (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr));
    return 1; /* the main program comes first: stop there */
}

/* `LOADER --list PROGRAM` into out (what fits); false when it could not run or failed (a
 * script, a static program, another architecture). */
static bool list_objects(const char *program, char *out, size_t size)
{
    char loader[PATH_MAX] = "";
    dl_iterate_phdr(find_interp, loader);
    int fds[2];
    if (loader[0] == '\0' || pipe2(fds, O_CLOEXEC) != 0)
        return false;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDERR_FILENO);
        execl(loader, loader, "--list", program, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0;
    ssize_t n;
    while (pid > 0 && (n = read(fds[0], out + len, size - 1 - len)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (len += (size_t)n) == size - 1)
            break;
    }
    out[len] = '\0';
    close(fds[0]);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The path an --list line names: "name => /path (0x...)", or "/path (0x...)". */
static bool line_path(const char *line, size_t len, char *out, size_t size)
{
    const char *arrow = memmem(line, len, "=> ", 3);
    const char *start = arrow ? arrow + 3 : line;
    while (start < line + len && (*start == ' ' || *start == '\t'))
        start++;
    const char *end = start;
    while (end < line + len && *end != ' ' && *end != '(')
        end++;
    if (end == start || *start != '/' || (size_t)(end - start) >= size)
        return false;
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return true;
}

struct markers {
    unsigned found; /* a bit per family */
    bool shim;
};

static bool note_marker(const GElf_Sym *sym, const char *name, void *data)
{
    (void)sym;
    struct markers *m = data;
    m->shim |= strcmp(name, SHIM_MARKER) == 0;
    for (size_t f = 0; f < FAMILIES; f++)
        if (strcmp(name, families[f].marker) == 0)
            m->found |= 1u << f;
    return false; /* every symbol */
}

/* Which families' marker symbols the object at path defines (a bit per family); none for a
 * qaudit shim, which defines them too. */
static unsigned families_defined(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    struct markers m = {0, false};
    if (elf) {
        dynsym_each(elf, note_marker, &m);
        elf_end(elf);
    }
    close(fd);
    return m.shim ? 0 : m.found;
}

static unsigned families_loaded(const char *program)
{
    static char listing[1 << 16];
    char resolved[PATH_MAX];
    if (!program_resolve(program, resolved, sizeof resolved) ||
        !list_objects(resolved, listing, sizeof listing))
        return 0;
    unsigned found = 0;
    for (char *line = listing; *line;) {
        size_t len = strcspn(line, "\n");
        char path[PATH_MAX];
        if (line_path(line, len, path, sizeof path))
            found |= families_defined(path);
        line += len + (line[len] == '\n');
    }
    return found;
}

size_t allocator_shims(const char *program, const char *preload, char *out, size_t size)
{
    out[0] = '\0';
    unsigned found = families_loaded(program);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", preload); /* the shims lie beside the preload */
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    size_t count = 0, len = 0;
    for (size_t f = 0; f < FAMILIES; f++) {
        if (!(found & (1u << f)))
            continue;
        char shim[PATH_MAX + 64];
        snprintf(shim, sizeof shim, "%s/%s", dir, families[f].shim);
        if (access(shim, R_OK) != 0) {
            fprintf(stderr,
                    "qaudit run: %s loads %s but %s is missing: calls to %s's own entry points "
                    "will not be counted\n",
                    program, families[f].name, shim, families[f].name);
            continue;
        }
        int n = snprintf(out + len, size - len, "%s%s", len ? ":" : "", shim);
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
        count++;
    }
    return count;
}
