/* Class definitions from the DWARF of the libraries a binary needs (probe_measuring.h). */
#include "probe_measuring.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct library {
    char *path;       /* the library, as the dynamic linker finds it */
    char *debug_path; /* the file its DWARF was read from; NULL before or without */
    bool opened;
    Dwfl *dwfl; /* when libdwfl found the DWARF (own, build id, debuglink) */
    struct lean_dwarf lean;
    bool lean_open;
    Dwarf *dw;
    struct type_defs *defs;
};

struct library_defs {
    char *binary;
    bool listed;
    struct library *libs;
    size_t count;
};

struct library_defs *probe_library_defs_new(const char *binary)
{
    struct library_defs *l = calloc(1, sizeof *l);
    if (l != NULL && (l->binary = strdup(binary)) == NULL) {
        free(l);
        return NULL;
    }
    return l;
}

static bool list_libraries(struct library_defs *l)
{
    struct needed_libs needed;
    l->listed = true;
    if (!probe_needed_libs_find(l->binary, &needed))
        return false;
    l->libs = calloc(needed.count + 1, sizeof *l->libs);
    for (size_t i = 0; l->libs != NULL && i < needed.count; i++) {
        l->libs[l->count].path = needed.paths[i];
        needed.paths[i] = NULL;
        l->count++;
    }
    probe_needed_libs_free(&needed);
    return l->libs != NULL;
}

/* libdwfl's search: the library's own DWARF, or its separate debug file by build id or
 * .gnu_debuglink (under /usr/lib/debug too). */
static bool open_with_dwfl(struct library *lib)
{
    char error[256];
    Dwfl_Module *module = probe_report_offline(lib->path, &lib->dwfl, error, sizeof error);
    Dwarf_Addr bias;
    lib->dw = module ? dwfl_module_getdwarf(module, &bias) : NULL;
    const char *debug = NULL;
    if (lib->dw != NULL) {
        dwfl_module_info(module, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
        lib->debug_path = strdup(debug ? debug : lib->path);
        return true;
    }
    if (lib->dwfl != NULL)
        dwfl_end(lib->dwfl);
    lib->dwfl = NULL;
    return false;
}

/* The debug build a Debian -dbg package puts beside the library, in debug/ under the same file
 * name (the same version: its types are the library's). */
static bool open_debug_build(struct library *lib)
{
    char *copy = strdup(lib->path), *copy2 = strdup(lib->path), candidate[PATH_MAX];
    if (copy == NULL || copy2 == NULL) {
        free(copy);
        free(copy2);
        return false;
    }
    snprintf(candidate, sizeof candidate, "%s/debug/%s", dirname(copy), basename(copy2));
    free(copy);
    free(copy2);
    char error[256];
    if (!probe_check_file(candidate, error, sizeof error) ||
        !probe_lean_dwarf_open(candidate, &lib->lean))
        return false;
    lib->lean_open = true;
    lib->dw = lib->lean.dwarf;
    lib->debug_path = strdup(candidate);
    return true;
}

static void open_library(struct library *lib)
{
    lib->opened = true;
    char error[256];
    if (!probe_check_file(lib->path, error, sizeof error)) /* a cut file: not read */
        return;
    if (open_debug_build(lib) || open_with_dwfl(lib))
        lib->defs = probe_type_defs_new(lib->dw);
}

bool probe_library_defs_find(struct library_defs *l, Dwarf_Die *decl, Dwarf_Die *def)
{
    if (l == NULL || (!l->listed && !list_libraries(l)))
        return false;
    for (size_t i = 0; i < l->count; i++) {
        struct library *lib = &l->libs[i];
        if (!lib->opened)
            open_library(lib);
        if (lib->defs != NULL && probe_type_defs_find(lib->defs, decl, def))
            return true;
    }
    return false;
}

const char *probe_library_defs_source(const struct library_defs *l, const Dwarf_Die *def)
{
    Dwarf *dw = l != NULL && def->cu != NULL ? dwarf_cu_getdwarf(def->cu) : NULL;
    for (size_t i = 0; dw != NULL && i < l->count; i++)
        if (l->libs[i].dw == dw)
            return l->libs[i].debug_path;
    return NULL;
}

void probe_library_defs_free(struct library_defs *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->count; i++) {
        struct library *lib = &l->libs[i];
        probe_type_defs_free(lib->defs);
        if (lib->lean_open)
            probe_lean_dwarf_close(&lib->lean);
        if (lib->dwfl != NULL)
            dwfl_end(lib->dwfl);
        free(lib->path);
        free(lib->debug_path);
    }
    free(l->libs);
    free(l->binary);
    free(l);
}
