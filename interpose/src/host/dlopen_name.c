/* The file a program's dlopen means. glibc resolves a name against its caller: a bare name is
 * searched along the calling module's RPATH and RUNPATH, "$ORIGIN" is the calling module's
 * directory. Through loader.c's wrapper the caller glibc sees is the preload, which has neither,
 * so a plugin found natively through the program's RUNPATH was not found at all (or another file
 * of that name was loaded from the cache). So before forwarding, the name is resolved as the
 * real caller would have it: $ORIGIN expanded with the caller's directory (as glibc takes it:
 * the directory of the module's name, /proc/self/exe's for the main program), a
 * bare name looked for in the caller's own search list (RTLD_DI_SERINFO: its RPATH, those of its
 * loaders, LD_LIBRARY_PATH and its RUNPATH, in the loader's order) up to the system
 * directories, which, like the loader's cache, are the same for every caller. A name already
 * loaded, or found nowhere in that list, is forwarded as it is.
 * Context: the program's dlopen, any thread, before the call is forwarded (not under the guard:
 * what glibc allocates here it would allocate natively). */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"

/* The caller's module, as a handle dlinfo takes; NULL when the address is in none. */
static struct link_map *module_of(const void *caller)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (dladdr1(caller, &info, (void **)&map, RTLD_DL_LINKMAP) == 0)
        return NULL;
    return map;
}

static bool join(char *out, size_t size, const char *a, size_t a_len, const char *b)
{
    size_t b_len = strlen(b);
    if (a_len + b_len + 1 > size)
        return false;
    memcpy(out, a, a_len);
    memcpy(out + a_len, b, b_len + 1);
    return true;
}

/* The directory of the caller's module: of its name, or of /proc/self/exe for the main program
 * (whose name is empty). Not dlinfo's RTLD_DI_ORIGIN: glibc copies a string it computes only
 * once some name needed it, and into a buffer of unstated size. */
static bool origin_of(struct link_map *caller, char *out, size_t size)
{
    ssize_t n;
    if (caller->l_name[0] == '\0') {
        n = readlink("/proc/self/exe", out, size - 1);
        if (n <= 0)
            return false;
        out[n] = '\0';
    } else {
        n = (ssize_t)strlen(caller->l_name);
        if ((size_t)n >= size)
            return false;
        memcpy(out, caller->l_name, (size_t)n + 1);
    }
    char *slash = strrchr(out, '/');
    if (slash == NULL)
        return false;
    *slash = '\0';
    return true;
}

/* file with its first "$ORIGIN" or "${ORIGIN}" replaced by the caller's directory. */
static bool expand_origin(const char *file, struct link_map *caller, char *out, size_t size)
{
    const char *at = strstr(file, "$ORIGIN");
    size_t token = 7;
    if (at == NULL && (at = strstr(file, "${ORIGIN}")) != NULL)
        token = 9;
    char origin[QA_PATH_MAX], head[QA_PATH_MAX];
    if (at == NULL || !origin_of(caller, origin, sizeof origin))
        return false;
    size_t prefix = (size_t)(at - file);
    return join(head, sizeof head, file, prefix, origin) &&
           join(out, size, head, strlen(head), at + token);
}

static bool regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The first directory of the caller's search list, before the system ones, that holds file. */
static bool search_caller_paths(const char *file, struct link_map *caller, char *out, size_t size)
{
    _Alignas(Dl_serinfo) char buffer[8192];
    Dl_serinfo *info = (Dl_serinfo *)buffer;
    if (dlinfo(caller, RTLD_DI_SERINFOSIZE, info) != 0 || info->dls_size > sizeof buffer)
        return false;
    if (dlinfo(caller, RTLD_DI_SERINFOSIZE, info) != 0 ||
        dlinfo(caller, RTLD_DI_SERINFO, info) != 0)
        return false;
    for (unsigned i = 0; i < info->dls_cnt; i++) {
        const Dl_serpath *dir = &info->dls_serpath[i];
        if (dir->dls_flags & LA_SER_DEFAULT)
            break;
        char with_slash[QA_PATH_MAX];
        if (!join(with_slash, sizeof with_slash, dir->dls_name, strlen(dir->dls_name), "/") ||
            !join(out, size, with_slash, strlen(with_slash), file))
            continue;
        if (regular_file(out))
            return true;
    }
    return false;
}

/* The name to forward for the program's dlopen(file) from caller: out (a path resolved as the
 * caller would have it), or file itself. already_loaded asks the loader, caller-independently,
 * whether a module of that name is loaded (glibc then returns it, whatever the search). */
const char *qa_dlopen_name(const char *file, const void *caller,
                           bool (*already_loaded)(const char *), char *out, size_t size)
{
    if (file == NULL || file[0] == '\0')
        return file;
    bool dst = strchr(file, '$') != NULL, bare = strchr(file, '/') == NULL;
    if (!dst && !bare)
        return file;
    struct link_map *module = module_of(caller);
    if (module == NULL)
        return file;
    if (dst)
        return expand_origin(file, module, out, size) ? out : file;
    if (already_loaded(file))
        return file;
    return search_caller_paths(file, module, out, size) ? out : file;
}
