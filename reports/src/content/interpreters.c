/* What an interpreter hides from an interposed malloc, and the symbols a report lacks.
 *
 * Python: its own allocator (pymalloc, the default) serves objects of 512 bytes or less from
 * arenas it maps itself, which no interposed call sees; PYTHONMALLOC=malloc sends every object to
 * malloc (qaudit run sets it unless PYTHONMALLOC is set). A dump records the variable as the
 * process started (process.pythonmalloc, when set); a dump that does not (an older one, or a
 * process started without it) is read from the sizes: under PYTHONMALLOC=malloc CPython's start-up
 * alone makes over 20,000 allocations of 512 bytes or less (3.11: 22,168 of 22,073 + reallocs for
 * `pass`), nearly all it makes; under pymalloc a few hundred (633 of 1,113 calls for `pass`).
 *
 * Runtimes with a heap of their own (the JVM, V8, .NET's CoreCLR, Go's): their objects live in
 * memory the runtime maps and collects itself, and never reach malloc; a dump of such a process
 * counts its native allocations only, which the report says. Told by a module (libjvm.so), the
 * executable's name (node, which links V8 in), or a section of the executable's file where it is
 * (a Go program built with cgo, the only kind the preload reaches, has .note.go.buildid).
 *
 * The facts (which runtime, whether Python's objects were counted) are runtimes.c's, the reader's;
 * this file makes the sentences.
 *
 * Frames without symbols: the Debian package that ships the module (dpkg's file lists) and the
 * one with its debug symbols: pythonX.Y-dbg for the interpreter, libc6-dbg for the C library,
 * otherwise PACKAGE-dbgsym from Debian's debug archive. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports_content.h"

/* Frames of each module that have no function name, over every site of program (every site
 * when 0). */
static uint64_t *unnamed_frames(const struct report *r, uint64_t program)
{
    uint64_t *count = calloc(r->module_count + 1, sizeof *count);
    for (size_t i = 0; count && i < r->site_count; i++) {
        const struct report_stack *s = &r->sites[i].stack;
        if (r->sites[i].by_design != NULL) /* no leak: its names would change nothing */
            continue;
        if (!report_site_of_lead(&r->sites[i], program))
            continue;
        for (size_t f = 0; f < s->frame_count; f++) {
            const struct report_frame *frame = &s->frames[f];
            bool named = false;
            for (size_t l = 0; l < frame->location_count; l++)
                named = named || frame->locations[l].function != NULL;
            if (!named && frame->module != REPORT_NO_MODULE)
                count[frame->module]++;
        }
    }
    return count;
}

/* Whether dpkg's file list at path names file (one path a line). */
static bool list_names(const char *path, const char *const *files, size_t n)
{
    FILE *f = fopen(path, "r");
    char line[PATH_MAX + 2];
    bool found = false;
    while (f != NULL && !found && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        for (size_t i = 0; i < n && !found; i++)
            found = strcmp(line, files[i]) == 0;
    }
    if (f != NULL)
        fclose(f);
    return found;
}

/* The package whose file list holds path (as given, resolved, with and without /usr). */
static bool owner_package(const char *path, char *package, size_t size)
{
    char resolved[PATH_MAX], other[PATH_MAX], other_resolved[PATH_MAX];
    const char *files[4] = {path, realpath(path, resolved) ? resolved : path};
    size_t n = 2;
    if (strncmp(path, "/usr/", 5) == 0)
        files[n++] = path + 4;
    else if (snprintf(other, sizeof other, "/usr%s", path) < (int)sizeof other)
        files[n++] = other;
    if (strncmp(files[1], "/usr/", 5) == 0)
        files[n++] = strcpy(other_resolved, files[1] + 4);
    DIR *dir = opendir("/var/lib/dpkg/info");
    struct dirent *e;
    bool found = false;
    while (dir != NULL && !found && (e = readdir(dir)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".list") != 0)
            continue;
        char list[PATH_MAX];
        snprintf(list, sizeof list, "/var/lib/dpkg/info/%s", e->d_name);
        if (!list_names(list, files, n))
            continue;
        int name = (int)(len - 5); /* "python3.11-minimal.list", "libc6:amd64.list" */
        snprintf(package, size, "%.*s",
                 (int)strcspn(e->d_name, ":") < name ? (int)strcspn(e->d_name, ":") : name,
                 e->d_name);
        found = true;
    }
    if (dir != NULL)
        closedir(dir);
    return found;
}

/* The package dpkg's status names as package's source (itself when it has none). */
static void source_package(const char *package, char *source, size_t size)
{
    snprintf(source, size, "%s", package);
    FILE *f = fopen("/var/lib/dpkg/status", "r");
    char line[1024], want[256];
    snprintf(want, sizeof want, "Package: %s\n", package);
    bool in = false;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "Package: ", 9) == 0)
            in = strcmp(line, want) == 0;
        else if (in && strncmp(line, "Source: ", 8) == 0)
            snprintf(source, size, "%.*s", (int)strcspn(line + 8, " \n"), line + 8);
    }
    if (f != NULL)
        fclose(f);
}

/* The package with package's debug symbols, by Debian's names for them. */
static void debug_package(const char *package, char *out, size_t size)
{
    char source[256];
    source_package(package, source, sizeof source);
    unsigned major, minor;
    char rest;
    if (sscanf(source, "python%u.%u%c", &major, &minor, &rest) == 2)
        snprintf(out, size, "python%u.%u-dbg", major, minor);
    else if (strcmp(package, "libc6") == 0)
        snprintf(out, size, "libc6-dbg");
    else
        snprintf(out, size, "%s-dbgsym", package);
}

size_t report_debug_hints(const struct report *r, uint64_t program, struct debug_hint *out,
                          size_t max)
{
    uint64_t *unnamed = r->symbolized ? unnamed_frames(r, program) : NULL;
    size_t n = 0;
    for (size_t m = 0; unnamed && m < r->module_count && n < max; m++) {
        const struct report_module *mod = &r->modules[m];
        if (unnamed[m] == 0 || mod->missing || mod->path[0] != '/')
            continue;
        struct debug_hint *h = &out[n++];
        *h = (struct debug_hint){.module = m, .frames = unnamed[m]};
        if (owner_package(mod->path, h->package, sizeof h->package))
            debug_package(h->package, h->debug, sizeof h->debug);
    }
    free(unnamed);
    return n;
}

/* Debian's codename for its debug suite ("bookworm"), from /etc/os-release; "" when unknown. */
static void codename(char *out, size_t size)
{
    FILE *f = fopen("/etc/os-release", "r");
    char line[256];
    out[0] = '\0';
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VERSION_CODENAME=", 17) == 0)
            snprintf(out, size, "%.*s", (int)strcspn(line + 17, "\"\n"), line + 17);
    if (f != NULL)
        fclose(f);
}

void report_debug_hint_sentence(const struct report *r, const struct debug_hint *h, char *out,
                                size_t size)
{
    const char *path = r->modules[h->module].path, *base = strrchr(path, '/');
    char frames[32], suite[64];
    report_fmt_count(frames, sizeof frames, h->frames);
    int n =
        snprintf(out, size, "Frames in %s have no function names (%s frame%s, shown as %s+0x...)",
                 path, frames, h->frames == 1 ? "" : "s", base ? base + 1 : path);
    if (n < 0 || (size_t)n >= size)
        return;
    if (h->debug[0] == '\0') {
        snprintf(out + n, size - (size_t)n,
                 ": it has no symbol table and no debug file was found for it (by build id under "
                 "/usr/lib/debug/.build-id, or its .gnu_debuglink).");
        return;
    }
    codename(suite, sizeof suite);
    bool dbgsym = strstr(h->debug, "-dbgsym") != NULL;
    snprintf(out + n, size - (size_t)n,
             ": Debian ships its symbols in %s%s%s%s (apt-get install %s, then report again).",
             h->debug, dbgsym ? ", from Debian's debug archive (the " : "",
             dbgsym ? (suite[0] ? suite : "release's") : "", dbgsym ? "-debug suite)" : "",
             h->debug);
}
