/* Finding and reading the control record (qaudit/control.h) of the libqaudit-preload.so loaded
 * in another process: its mappings from /proc/PID/maps, the symbol from the ELF file's .dynsym
 * (libelf), the record itself with process_vm_readv. Nothing here trusts the process's environment:
 * programs rewrite it (redis-server overwrites it with its title). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "elf_dynsym.h"
#include "qaudit/control.h"

#define PRELOAD_NAME "libqaudit-preload"

/* One line of /proc/PID/maps. */
struct mapping {
    uint64_t start, end, offset, inode;
    char dev[16];
    char path[PRELOAD_PATH_MAX];
};

static bool parse_mapping(const char *line, struct mapping *m)
{
    int path_at = 0;
    if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %15s %" SCNu64 " %n", &m->start,
               &m->end, &m->offset, m->dev, &m->inode, &path_at) < 5 ||
        path_at == 0)
        return false;
    snprintf(m->path, sizeof m->path, "%s", line + path_at);
    m->path[strcspn(m->path, "\n")] = '\0';
    return true;
}

/* The image already listed for this file (same device and inode), or a new slot. */
static struct preload_image *image_for(struct preload_image *images, int *count, int max,
                                       const struct mapping *m)
{
    for (int i = 0; i < *count; i++)
        if (images[i].inode == m->inode && strcmp(images[i].dev, m->dev) == 0)
            return &images[i];
    if (*count == max)
        return NULL;
    struct preload_image *img = &images[(*count)++];
    memset(img, 0, sizeof *img);
    snprintf(img->path, sizeof img->path, "%s", m->path);
    snprintf(img->dev, sizeof img->dev, "%s", m->dev);
    img->inode = m->inode;
    return img;
}

/* Opens the file behind a mapping: map_files/ reaches it even when it was deleted or replaced
 * (a rebuilt preload) or lies in another mount namespace; then the path under the process's
 * root; then the path as named. */
static int open_mapped_file(pid_t pid, const struct preload_image *img)
{
    char path[PRELOAD_PATH_MAX + 64];
    snprintf(path, sizeof path, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, img->map_start,
             img->map_end);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        return fd;
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, img->path);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? fd : open(img->path, O_RDONLY | O_CLOEXEC);
}

/* The load base: the mapping at file offset 0 minus the first PT_LOAD's page-aligned address. */
static bool load_bias(Elf *elf, const struct preload_image *img, uint64_t *bias)
{
    size_t count;
    if (elf_getphdrnum(elf, &count) != 0)
        return false;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < count; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) != NULL && ph.p_type == PT_LOAD) {
            *bias = img->map_start - (ph.p_vaddr & ~(page - 1));
            return true;
        }
    }
    return false;
}

/* A symbol of the mapped file by name and type (STT_OBJECT: the control record, the attach
 * notes; STT_FUNC), among its .dynsym symbols. */
struct named_symbol {
    const char *name;
    int type;
    GElf_Sym sym;
};

static bool is_named(const GElf_Sym *sym, const char *name, void *data)
{
    struct named_symbol *s = data;
    if (GELF_ST_TYPE(sym->st_info) != s->type || strcmp(name, s->name) != 0)
        return false;
    s->sym = *sym;
    return true;
}

/* The address in pid and the size of img's symbol name of that type: 0, ENOENT when the file
 * has none, or the errno of opening it. */
static int mapped_symbol(pid_t pid, const struct preload_image *img, const char *name, int type,
                         uint64_t *address, uint64_t *size)
{
    int fd = open_mapped_file(pid, img);
    if (fd < 0)
        return errno;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    uint64_t bias;
    struct named_symbol found = {name, type, {0}};
    int err = ENOENT;
    if (elf != NULL && elf_kind(elf) == ELF_K_ELF && load_bias(elf, img, &bias) &&
        dynsym_each(elf, is_named, &found)) {
        *address = bias + found.sym.st_value;
        *size = found.sym.st_size;
        err = 0;
    }
    if (elf != NULL)
        elf_end(elf);
    close(fd);
    return err;
}

/* Fills img->record and img->record_size, or leaves them 0 when the file has no record. */
static void locate_record(pid_t pid, struct preload_image *img)
{
    int err =
        mapped_symbol(pid, img, QAUDIT_CONTROL_SYMBOL, STT_OBJECT, &img->record, &img->record_size);
    if (err != 0 && err != ENOENT)
        img->unreadable = err;
}

int mapped_modules(pid_t pid, const char *name_part, struct preload_image *images, int max)
{
    char path[64], line[PRELOAD_PATH_MAX + 128];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "r");
    if (maps == NULL)
        return -errno;
    int count = 0;
    struct mapping m;
    while (fgets(line, sizeof line, maps))
        if (parse_mapping(line, &m) && strstr(m.path, name_part) != NULL) {
            struct preload_image *img = image_for(images, &count, max, &m);
            if (img != NULL && m.offset == 0 && img->map_end == 0) {
                img->map_start = m.start;
                img->map_end = m.end;
            }
        }
    fclose(maps);
    return count;
}

int preload_images(pid_t pid, struct preload_image *images, int max)
{
    int count = mapped_modules(pid, PRELOAD_NAME, images, max);
    elf_version(EV_CURRENT);
    for (int i = 0; i < count; i++)
        if (images[i].map_end != 0)
            locate_record(pid, &images[i]);
    return count;
}

uint64_t mapped_function(pid_t pid, const struct preload_image *img, const char *name)
{
    uint64_t address = 0, size;
    return mapped_symbol(pid, img, name, STT_FUNC, &address, &size) == 0 ? address : 0;
}

static int read_remote(pid_t pid, uint64_t address, void *out, size_t size)
{
    struct iovec local = {out, size};
    struct iovec remote = {(void *)(uintptr_t)address, size};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n < 0)
        return errno;
    return (size_t)n == size ? 0 : EFAULT;
}

int preload_control_read(pid_t pid, const struct preload_image *img, struct qaudit_control *out)
{
    size_t size = img->record_size < sizeof *out ? (size_t)img->record_size : sizeof *out;
    if (size < offsetof(struct qaudit_control, pid))
        return EFAULT; /* too small to hold even the magic and version */
    uint64_t generation_at = img->record + offsetof(struct qaudit_control, generation);
    /* A seqlock read: the preload holds the generation odd only around a short copy. */
    for (int attempt = 0; attempt < 1000; attempt++) {
        memset(out, 0, sizeof *out);
        int err = read_remote(pid, img->record, out, size);
        uint32_t after;
        if (err == 0)
            err = read_remote(pid, generation_at, &after, sizeof after);
        if (err != 0)
            return err;
        if (out->generation % 2 == 0 && after == out->generation)
            return 0;
        nanosleep(&(struct timespec){0, 100 * 1000}, NULL);
    }
    return EAGAIN;
}

bool preload_control_current(pid_t pid, const struct preload_image *img, struct qaudit_control *out)
{
    return img->record != 0 && img->record_size == sizeof *out &&
           preload_control_read(pid, img, out) == 0 && out->version == QAUDIT_CONTROL_VERSION;
}

void preload_attach_notes(pid_t pid, const struct preload_image *img, char *out, size_t size)
{
    uint64_t at, length;
    out[0] = '\0';
    if (mapped_symbol(pid, img, QAUDIT_ATTACH_NOTES_SYMBOL, STT_OBJECT, &at, &length) != 0 ||
        length == 0)
        return;
    size_t n = length < size ? (size_t)length : size;
    if (read_remote(pid, at, out, n) != 0)
        out[0] = '\0';
    out[n - 1] = '\0';
}

/* Asks the preload for a dump: token into the record's request field (process_vm_writev needs
 * the same permission as reading). 0, or an errno. */
int preload_control_write(pid_t pid, const struct preload_image *img, size_t offset, uint64_t token)
{
    if (img->record_size < sizeof(struct qaudit_control))
        return EFAULT;
    struct iovec local = {&token, sizeof token};
    struct iovec remote = {(void *)(uintptr_t)(img->record + offset), sizeof token};
    ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
    if (n < 0)
        return errno;
    return (size_t)n == sizeof token ? 0 : EFAULT;
}

int preload_control_request(pid_t pid, const struct preload_image *img, uint64_t token)
{
    return preload_control_write(pid, img, offsetof(struct qaudit_control, request), token);
}

/* The direct children of pid with a libqaudit-preload.so mapped, up to max; how many. */
int preload_children(pid_t pid, pid_t *children, int max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *f = fopen(path, "r");
    int found = 0;
    long child;
    struct preload_image image;
    while (f != NULL && found < max && fscanf(f, "%ld", &child) == 1)
        if (preload_images((pid_t)child, &image, 1) > 0)
            children[found++] = (pid_t)child;
    if (f != NULL)
        fclose(f);
    return found;
}

/* The record's pid is the one getpid() gave inside the process: in a pid namespace (a container)
 * that is the last NSpid of /proc/PID/status, not the pid seen from here. */
bool preload_pid_matches(pid_t pid, int32_t record_pid)
{
    if (record_pid == (int32_t)pid)
        return true;
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    bool match = false;
    while (f != NULL && !match && fgets(line, sizeof line, f))
        if (strncmp(line, "NSpid:", 6) == 0) {
            const char *last = strrchr(line, '\t');
            match = last != NULL && atoi(last + 1) == record_pid;
            break;
        }
    if (f != NULL)
        fclose(f);
    return match;
}

int ptrace_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = -1;
    if (f != NULL) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = -1;
        fclose(f);
    }
    return scope;
}

void ptrace_permission_hint(char *out, size_t size)
{
    int scope = ptrace_scope();
    if (scope == 3)
        snprintf(out, size,
                 "ptrace permission denied: /proc/sys/kernel/yama/ptrace_scope is 3: no process "
                 "may read or trace another's, root included");
    else if (scope >= 1)
        snprintf(out, size,
                 "ptrace permission denied: /proc/sys/kernel/yama/ptrace_scope is %d (%s); run "
                 "qaudit as root or with CAP_SYS_PTRACE",
                 scope,
                 scope == 1 ? "only a parent may read or trace its children"
                            : "only CAP_SYS_PTRACE may read or trace another process");
    else
        snprintf(out, size,
                 "ptrace permission denied: the process belongs to another user, or changed "
                 "credentials (setuid, not dumpable); run qaudit as its user or as root");
}
