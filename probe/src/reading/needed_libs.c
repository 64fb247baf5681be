/* The C++ libraries a binary needs, found as the dynamic linker finds them (probe_reading.h). The
 * look-up is ld.so's (ld.so(8)) without its cache: the cache only speeds up the directory walk. */
#include "probe_reading.h"

#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow_array.h"

#define MAX_LIBS 64

/* Where ld.so looks after LD_LIBRARY_PATH and DT_RUNPATH, when /etc/ld.so.conf.d names none. */
static const char *const system_dirs[] = {"/lib/x86_64-linux-gnu",
                                          "/usr/lib/x86_64-linux-gnu",
                                          "/lib64",
                                          "/usr/lib64",
                                          "/lib",
                                          "/usr/lib"};

/* What one ELF file says of its dynamic linking. */
struct dynamic {
    char *needed[MAX_LIBS];
    size_t needed_count;
    char *runpath; /* DT_RUNPATH, else DT_RPATH */
    int machine;
    bool cxx; /* defines a dynamic symbol with a C++ (mangled) name */
};

static void dynamic_free(struct dynamic *d)
{
    for (size_t i = 0; i < d->needed_count; i++)
        free(d->needed[i]);
    free(d->runpath);
}

static void read_dynamic_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct dynamic *d)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    bool runpath = false;
    for (size_t i = 0; data != NULL && sh->sh_entsize > 0 && i < sh->sh_size / sh->sh_entsize;
         i++) {
        GElf_Dyn dyn;
        if (gelf_getdyn(data, (int)i, &dyn) == NULL || dyn.d_tag == DT_NULL)
            break;
        const char *s = dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_RUNPATH || dyn.d_tag == DT_RPATH
                            ? elf_strptr(elf, sh->sh_link, dyn.d_un.d_val)
                            : NULL;
        if (s == NULL)
            continue;
        if (dyn.d_tag == DT_NEEDED && d->needed_count < MAX_LIBS) {
            d->needed[d->needed_count] = strdup(s);
            d->needed_count += d->needed[d->needed_count] != NULL;
        } else if (dyn.d_tag != DT_NEEDED && (dyn.d_tag == DT_RUNPATH || !runpath)) {
            free(d->runpath);
            d->runpath = strdup(s);
            runpath |= dyn.d_tag == DT_RUNPATH;
        }
    }
}

/* Whether .dynsym defines a symbol whose name is mangled C++ ("_Z..."). */
static bool defines_cxx(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    for (size_t i = 0; data != NULL && sh->sh_entsize > 0 && i < sh->sh_size / sh->sh_entsize;
         i++) {
        GElf_Sym sym;
        const char *name;
        if (gelf_getsym(data, (int)i, &sym) != NULL && sym.st_shndx != SHN_UNDEF &&
            (name = elf_strptr(elf, sh->sh_link, sym.st_name)) != NULL &&
            strncmp(name, "_Z", 2) == 0)
            return true;
    }
    return false;
}

static bool read_dynamic(const char *path, struct dynamic *d)
{
    memset(d, 0, sizeof *d);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    bool ok = elf != NULL && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) != NULL;
    for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(elf, scn)) != NULL;) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == NULL)
            continue;
        if (sh.sh_type == SHT_DYNAMIC)
            read_dynamic_section(elf, scn, &sh, d);
        else if (sh.sh_type == SHT_DYNSYM && !d->cxx)
            d->cxx = defines_cxx(elf, scn, &sh);
    }
    if (ok)
        d->machine = eh.e_machine;
    if (elf != NULL)
        elf_end(elf);
    close(fd);
    return ok;
}

struct search {
    struct needed_libs *out;
    char *queue[MAX_LIBS]; /* resolved paths, in the order found; each once */
    size_t queued;
    int machine;
    char **dirs; /* LD_LIBRARY_PATH, /etc/ld.so.conf.d, the system's */
    size_t dir_count, dir_capacity;
};

static bool add_dir(struct search *s, const char *dir, size_t n)
{
    if (n == 0 || n >= PATH_MAX)
        return true;
    if (!array_reserve(&s->dirs, &s->dir_capacity, s->dir_count + 1, sizeof *s->dirs))
        return false;
    if ((s->dirs[s->dir_count] = strndup(dir, n)) == NULL)
        return false;
    s->dir_count++;
    return true;
}

/* Each directory of a list separated by ':' (or ';', as ld.so also takes), $ORIGIN replaced. */
static bool add_dirs(struct search *s, const char *list, const char *origin)
{
    while (list != NULL && *list) {
        size_t n = strcspn(list, ":;");
        char dir[PATH_MAX];
        if (strncmp(list, "$ORIGIN", 7) == 0 && origin != NULL)
            snprintf(dir, sizeof dir, "%s%.*s", origin, (int)(n - 7), list + 7);
        else
            snprintf(dir, sizeof dir, "%.*s", (int)n, list);
        if (!add_dir(s, dir, strlen(dir)))
            return false;
        list += n + (list[n] != '\0');
    }
    return true;
}

/* The absolute directories the files /etc/ld.so.conf.d holds name, one a line. */
static bool add_conf_dirs(struct search *s)
{
    glob_t files;
    if (glob("/etc/ld.so.conf.d/*.conf", 0, NULL, &files) != 0)
        return true;
    bool ok = true;
    for (size_t i = 0; ok && i < files.gl_pathc; i++) {
        FILE *f = fopen(files.gl_pathv[i], "re");
        char line[PATH_MAX];
        while (ok && f != NULL && fgets(line, sizeof line, f) != NULL)
            if (line[0] == '/')
                ok = add_dir(s, line, strcspn(line, " \t\r\n#"));
        if (f != NULL)
            fclose(f);
    }
    globfree(&files);
    return ok;
}

static bool queued(const struct search *s, const char *path)
{
    for (size_t i = 0; i < s->queued; i++)
        if (strcmp(s->queue[i], path) == 0)
            return true;
    return false;
}

/* The ELF machine of the file at path, or -1. */
static int machine_of(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), machine = -1;
    if (fd < 0)
        return -1;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    if (elf != NULL && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) != NULL)
        machine = eh.e_machine;
    if (elf != NULL)
        elf_end(elf);
    close(fd);
    return machine;
}

/* The real path of name in dir, if it is a library of the binary's machine (not /usr/lib32's
 * i386 one), else NULL. */
static char *library_in(const struct search *s, const char *dir, const char *name)
{
    char candidate[PATH_MAX];
    snprintf(candidate, sizeof candidate, "%s/%s", dir, name);
    if (access(candidate, R_OK) != 0 || machine_of(candidate) != s->machine)
        return NULL;
    return realpath(candidate, NULL);
}

/* The file name needed by an object with runpath (and origin, its directory) resolves to, as
 * its real path, or NULL. */
static char *resolve(const struct search *s, const char *name, const char *runpath,
                     const char *origin)
{
    if (strchr(name, '/') != NULL)
        return realpath(name, NULL);
    struct search own = {.machine = s->machine};
    char *found = NULL;
    if (add_dirs(&own, runpath, origin))
        for (size_t i = 0; found == NULL && i < own.dir_count; i++)
            found = library_in(s, own.dirs[i], name);
    for (size_t i = 0; found == NULL && i < s->dir_count; i++)
        found = library_in(s, s->dirs[i], name);
    for (size_t i = 0; i < own.dir_count; i++)
        free(own.dirs[i]);
    free(own.dirs);
    return found;
}

/* Breadth first from the binary: each object's needed libraries join the queue once. */
static bool walk(struct search *s)
{
    for (size_t next = 0; next < s->queued; next++) {
        struct dynamic d;
        if (!read_dynamic(s->queue[next], &d))
            continue;
        if (next == 0)
            s->machine = d.machine;
        else if (d.cxx && (s->out->paths[s->out->count] = strdup(s->queue[next])) != NULL)
            s->out->count++;
        char *copy = strdup(s->queue[next]);
        const char *origin = copy ? dirname(copy) : NULL;
        for (size_t i = 0; i < d.needed_count && s->queued < MAX_LIBS; i++) {
            char *path = resolve(s, d.needed[i], d.runpath, origin);
            if (path != NULL && !queued(s, path))
                s->queue[s->queued++] = path;
            else
                free(path);
        }
        free(copy);
        dynamic_free(&d);
    }
    return true;
}

bool probe_needed_libs_find(const char *binary, struct needed_libs *out)
{
    memset(out, 0, sizeof *out);
    struct search s = {.out = out};
    bool ok = (out->paths = calloc(MAX_LIBS, sizeof *out->paths)) != NULL &&
              add_dirs(&s, getenv("LD_LIBRARY_PATH"), NULL) && add_conf_dirs(&s);
    for (size_t i = 0; ok && i < sizeof system_dirs / sizeof *system_dirs; i++)
        ok = add_dir(&s, system_dirs[i], strlen(system_dirs[i]));
    if (ok && (s.queue[0] = realpath(binary, NULL)) != NULL) {
        s.queued = 1;
        ok = walk(&s);
    }
    for (size_t i = 0; i < s.queued; i++)
        free(s.queue[i]);
    for (size_t i = 0; i < s.dir_count; i++)
        free(s.dirs[i]);
    free(s.dirs);
    if (!ok)
        probe_needed_libs_free(out);
    return ok;
}

void probe_needed_libs_free(struct needed_libs *libs)
{
    for (size_t i = 0; i < libs->count; i++)
        free(libs->paths[i]);
    free(libs->paths);
    memset(libs, 0, sizeof *libs);
}
