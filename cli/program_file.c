/* The program qaudit run is asked to start, as a file: where execvp would find it, and whether
 * a preloaded library can reach its malloc at all. A statically linked program (no PT_INTERP: no
 * dynamic loader, so LD_PRELOAD is never read) and one built for another machine than the preload
 * (the loader skips the preload with a warning) would run to the end and leave no dump; so would
 * one exec runs in secure mode (set-user-ID, set-group-ID, file capabilities), for which the
 * loader ignores LD_PRELOAD's paths. A file that is not ELF (a script) or cannot be read is left
 * to exec. */
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli.h"
#include "probe/elf_sections.h"

bool program_resolve(const char *program, char *out, size_t size)
{
    if (strchr(program, '/') != NULL) {
        snprintf(out, size, "%s", program);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    for (const char *dir = path ? path : "/usr/local/bin:/usr/bin:/bin"; *dir;) {
        size_t len = strcspn(dir, ":");
        snprintf(out, size, "%.*s/%s", (int)len, len ? dir : ".", program);
        if (access(out, X_OK) == 0)
            return true;
        dir += len + (dir[len] == ':');
    }
    return false;
}

static const char *machine_name(unsigned machine, unsigned class)
{
    switch (machine) {
    case EM_386:
        return "i386";
    case EM_X86_64:
        return class == ELFCLASS32 ? "x32" : "x86-64";
    case EM_AARCH64:
        return "aarch64";
    case EM_ARM:
        return "arm";
    case EM_RISCV:
        return class == ELFCLASS32 ? "riscv32" : "riscv64";
    default:
        return "another machine";
    }
}

/* The ELF header the preload was built for: this qaudit's own (they are built together). */
static bool own_header(GElf_Ehdr *own)
{
    int fd;
    Elf *elf = probe_elf_open("/proc/self/exe", &fd, NULL);
    if (elf == NULL)
        return false;
    bool ok = gelf_getehdr(elf, own) != NULL;
    probe_elf_close(elf, fd);
    return ok;
}

/* Whether elf names a program interpreter: the dynamic loader that reads LD_PRELOAD. */
static bool has_interpreter(Elf *elf)
{
    size_t count = 0;
    if (elf_getphdrnum(elf, &count) != 0)
        return true; /* unreadable: let exec judge it */
    for (size_t i = 0; i < count; i++) {
        GElf_Phdr phdr;
        if (gelf_getphdr(elf, (int)i, &phdr) != NULL && phdr.p_type == PT_INTERP)
            return true;
    }
    return false;
}

/* The dynamic loader run as a program (`ld.so ./prog`) has no interpreter either, but reads
 * LD_PRELOAD itself: it names itself (DT_SONAME), which a static program does not. */
static bool has_soname(Elf *elf)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        Elf_Data *data = NULL;
        if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type != SHT_DYNAMIC ||
            shdr.sh_entsize == 0 || (data = elf_getdata(scn, NULL)) == NULL)
            continue;
        for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
            GElf_Dyn dyn;
            if (gelf_getdyn(data, (int)i, &dyn) != NULL && dyn.d_tag == DT_SONAME)
                return true;
        }
    }
    return false;
}

/* A Go program carries its build id in a note section of its own name. */
static bool built_by_go(Elf *elf)
{
    return probe_find_section(elf, ".note.go.buildid") != NULL;
}

static void judge(Elf *elf, const char *program, char *why, size_t size)
{
    GElf_Ehdr own, ehdr;
    if (gelf_getehdr(elf, &ehdr) == NULL || (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN))
        return;
    if (own_header(&own) &&
        (ehdr.e_machine != own.e_machine || ehdr.e_ident[EI_CLASS] != own.e_ident[EI_CLASS])) {
        snprintf(why, size,
                 "%s is built for %s and the preload for %s: the loader would skip the preload "
                 "and nothing would be counted",
                 program, machine_name(ehdr.e_machine, ehdr.e_ident[EI_CLASS]),
                 machine_name(own.e_machine, own.e_ident[EI_CLASS]));
        return;
    }
    if (has_interpreter(elf) || has_soname(elf))
        return;
    snprintf(why, size,
             "%s is statically linked: no dynamic loader reads LD_PRELOAD for it, so nothing "
             "would be counted%s",
             program,
             built_by_go(elf) ? " (and a Go program allocates in its own runtime, not with malloc)"
                              : "; link it dynamically to audit it");
}

/* Whether exec would run path in secure mode (AT_SECURE, ld.so(8)): the loader then takes no
 * LD_PRELOAD entry with a slash, the preload's among them. The kernel sets it when the exec
 * changes the user or group (a set-user-ID file of another owner than the caller's real user, a
 * set-group-ID one of another group), unless the file system is mounted nosuid, and when file
 * capabilities raise a user other than root. */
static void judge_secure(const char *path, const char *program, char *why, size_t size)
{
    struct stat st;
    struct statvfs fs;
    if (stat(path, &st) != 0 || (statvfs(path, &fs) == 0 && (fs.f_flag & ST_NOSUID)))
        return;
    if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
        snprintf(why, size,
                 "%s is set-user-ID (owner uid %u): exec runs it in secure mode, in which the "
                 "loader ignores LD_PRELOAD, so nothing would be counted; run qaudit as uid %u, "
                 "or audit a copy without the bit",
                 program, (unsigned)st.st_uid, (unsigned)st.st_uid);
    else if ((st.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) && st.st_gid != getgid())
        snprintf(why, size,
                 "%s is set-group-ID (group gid %u): exec runs it in secure mode, in which the "
                 "loader ignores LD_PRELOAD, so nothing would be counted; audit a copy without "
                 "the bit",
                 program, (unsigned)st.st_gid);
    else if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
        snprintf(why, size,
                 "%s has file capabilities: exec runs it in secure mode, in which the loader "
                 "ignores LD_PRELOAD, so nothing would be counted; run qaudit as root, or audit a "
                 "copy without them",
                 program);
}

bool program_unreachable(const char *program, char *why, size_t size)
{
    why[0] = '\0';
    char path[4096];
    int fd;
    Elf *elf = program_resolve(program, path, sizeof path) ? probe_elf_open(path, &fd, NULL) : NULL;
    if (elf == NULL)
        return false; /* exec says why */
    judge(elf, program, why, size);
    probe_elf_close(elf, fd);
    if (why[0] == '\0')
        judge_secure(path, program, why, size);
    return why[0] != '\0';
}

bool program_is_go(const char *program)
{
    char path[4096];
    int fd;
    Elf *elf = program_resolve(program, path, sizeof path) ? probe_elf_open(path, &fd, NULL) : NULL;
    if (elf == NULL)
        return false;
    bool go = built_by_go(elf);
    probe_elf_close(elf, fd);
    return go;
}
