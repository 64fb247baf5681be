/* qaudit attach: loading libqaudit-preload.so into the stopped process with its own dlopen. By
 * its path first; when the process's user cannot open that file (a build in a private directory,
 * 0700 as make mutants' scratch copy, and an nginx worker running as www-data; or a process in
 * another mount namespace), from memory: a memfd made in the process (memfd_create, called
 * there), the library written into it through /proc/PID/fd/N, dlopen'ed by that descriptor, and
 * closed at once, so that its number goes back to the program. The loader's name for the library
 * is then that descriptor's; the preload takes the file's path instead (QAUDIT_ATTACH_LIBRARY),
 * so that the dump's module map, dladdr and a debugger name the real file. When neither works,
 * one line says which user could not read what, and what to do.
 * Context: every thread of the process stopped (ptrace_stop.c), t borrowed for the calls. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cli.h"
#include "ptrace_inject.h"

#define RTLD_NOW_ 2
/* The library is never unloaded (it stays mapped, inert, after a detach): its name in the link
 * map may then be one the preload owns. */
#define RTLD_NODELETE_ 0x1000
#define MFD_CLOEXEC_ 1u
#define MEMFD_NAME "libqaudit-preload.so"

uint64_t libc_function(pid_t pid, const char *name)
{
    static const char *const libraries[] = {"/libc.so", "/libc-2.", "/libdl.so", "/libdl-2."};
    struct preload_image img;
    for (size_t i = 0; i < sizeof libraries / sizeof libraries[0]; i++) {
        if (mapped_modules(pid, libraries[i], &img, 1) != 1 || img.map_end == 0)
            continue;
        uint64_t at = mapped_function(pid, &img, name);
        if (at != 0)
            return at;
    }
    return 0;
}

/* A call of a function of the C library's with one string argument (copied below the thread's
 * stack) and one integer; its result, or an errno with one line in why. */
static int call_libc(struct stopped_process *p, struct stopped_thread *t, const char *function,
                     const char *text, uint64_t arg, uint64_t *result, char *why, size_t size)
{
    uint64_t at = libc_function(p->pid, function);
    if (at == 0) {
        snprintf(why, size, "no %s in its C library", function);
        return ENOENT;
    }
    return remote_call(p, t, at, text, strlen(text) + 1, arg, result, why, size);
}

/* dlerror() in the process: why its last dlopen failed, or "". */
static void remote_dlerror(struct stopped_process *p, struct stopped_thread *t, char *out,
                           size_t size)
{
    uint64_t text = 0;
    char why[256];
    out[0] = '\0';
    if (call_libc(p, t, "dlerror", "", 0, &text, why, sizeof why) != 0 || text == 0)
        return;
    struct iovec local = {out, size - 1}, remote = {(void *)(uintptr_t)text, size - 1};
    ssize_t n = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);
    out[n > 0 ? n : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

/* The library's bytes into the process's descriptor fd (open through /proc: the tracer may). */
static int fill_descriptor(pid_t pid, int fd, const char *library)
{
    char path[64], buffer[65536];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
    int from = open(library, O_RDONLY | O_CLOEXEC), to = open(path, O_WRONLY | O_CLOEXEC);
    int err = from < 0 || to < 0 ? errno : 0;
    ssize_t n = 0;
    while (err == 0 && (n = read(from, buffer, sizeof buffer)) > 0)
        if (write(to, buffer, (size_t)n) != n)
            err = errno ? errno : EIO;
    if (err == 0 && n < 0)
        err = errno;
    if (from >= 0)
        close(from);
    if (to >= 0 && close(to) != 0 && err == 0)
        err = errno;
    return err;
}

/* The library dlopen'ed from a memfd made in the process; 0 with the handle in *handle (0 when
 * dlopen failed: its reason in why), or an errno with one line in why. */
static int load_from_memory(struct stopped_process *p, struct stopped_thread *t,
                            const char *library, uint64_t *handle, char *why, size_t size)
{
    uint64_t fd = 0, ignored;
    int err = call_libc(p, t, "memfd_create", MEMFD_NAME, MFD_CLOEXEC_, &fd, why, size);
    if (err == 0 && (int)fd < 0) {
        snprintf(why, size, "memfd_create failed there");
        return EPERM;
    }
    if (err != 0)
        return err;
    err = fill_descriptor(p->pid, (int)fd, library);
    if (err == 0) {
        /* Not "/proc/self/fd/N": the loader would answer the program's own later dlopen of
         * that name (a memfd of its own under the same number) with this library. */
        char name[64];
        snprintf(name, sizeof name, "/proc/self/fd/../fd/%d", (int)fd);
        err = call_libc(p, t, "dlopen", name, RTLD_NOW_ | RTLD_NODELETE_, handle, why, size);
        if (err == 0 && *handle == 0)
            remote_dlerror(p, t, why, size);
    } else
        snprintf(why, size, "cannot write the library into its memfd: %s", strerror(err));
    uint64_t close_at = libc_function(p->pid, "close");
    if (close_at != 0) /* the descriptor goes back to the program, whatever happened */
        remote_call_value(p, t, close_at, fd, &ignored, (char[64]){0}, 64);
    return err;
}

void process_ids(pid_t pid, uid_t *uid, gid_t *gid)
{
    char path[64], line[256];
    unsigned id;
    *uid = 0;
    *gid = 0;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    while (f != NULL && fgets(line, sizeof line, f)) {
        if (sscanf(line, "Uid: %*u %*u %*u %u", &id) == 1)
            *uid = (uid_t)id;
        if (sscanf(line, "Gid: %*u %*u %*u %u", &id) == 1)
            *gid = (gid_t)id;
    }
    if (f != NULL)
        fclose(f);
}

/* "user www-data (uid 33)". */
static void user_of(pid_t pid, char *out, size_t size)
{
    uid_t uid;
    gid_t gid;
    process_ids(pid, &uid, &gid);
    struct passwd *pw = getpwuid(uid);
    snprintf(out, size, "user %s (uid %u)", pw ? pw->pw_name : "?", (unsigned)uid);
}

int attach_load(struct stopped_process *p, struct stopped_thread *t, const char *library,
                bool *from_memory, char *why, size_t size)
{
    uint64_t handle = 0;
    *from_memory = false;
    int err = call_libc(p, t, "dlopen", library, RTLD_NOW_ | RTLD_NODELETE_, &handle, why, size);
    if (err != 0 || handle != 0)
        return err;
    char by_path[512], by_memory[512], who[128];
    remote_dlerror(p, t, by_path, sizeof by_path);
    size_t n = strlen(library); /* "PATH: cannot open shared object file: ...": PATH is said */
    if (strncmp(by_path, library, n) == 0 && strncmp(by_path + n, ": ", 2) == 0)
        memmove(by_path, by_path + n + 2, strlen(by_path + n + 2) + 1);
    err = load_from_memory(p, t, library, &handle, by_memory, sizeof by_memory);
    user_of(p->pid, who, sizeof who);
    if (err == 0 && handle != 0) {
        *from_memory = true;
        snprintf(why, size, "its %s cannot load %s (%s)", who, library, by_path);
        return 0;
    }
    bool unreadable = strstr(by_path, "Permission denied") || strstr(by_path, "No such file");
    snprintf(why, size, "its %s cannot load %s (%s), nor from memory (%s)%s", who, library,
             by_path[0] ? by_path : "dlopen failed", by_memory,
             unreadable ? ": put the preload where that user can read it (make install, or "
                          "--preload a copy in a directory it may enter)"
                        : "");
    return err != 0 ? err : ENOENT;
}
