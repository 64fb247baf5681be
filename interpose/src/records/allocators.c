/* The allocators with entry points of their own (jemalloc's mallocx, tcmalloc's tc_*,
 * mimalloc's mi_*) loaded at start-up, and whether a qaudit shim interposes each: the link map
 * is walked in symbol search order, and the first object defining the family's marker symbol is
 * the one the program's calls reach. When that is not a shim, the family's own calls are not
 * counted: said once on stderr, and the dump is not exact.
 * Context: start-up only. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "records.h"

struct family {
    const char *name, *marker, *shim;
};
static const struct family families[QAUDIT_FAMILIES] = {
    [QAUDIT_JEMALLOC] = {QA_KEY(jemalloc), "mallocx", "libqaudit-jemalloc.so"},
    [QAUDIT_TCMALLOC] = {QA_KEY(tcmalloc), "tc_malloc", "libqaudit-tcmalloc.so"},
    [QAUDIT_MIMALLOC] = {QA_KEY(mimalloc), "mi_malloc", "libqaudit-mimalloc.so"},
};

struct found {
    bool present;               /* an object other than a shim defines the marker */
    bool interposed;            /* ... and the family's shim comes before it */
    bool shim_loaded;           /* the family's shim is in the process */
    char library[200];          /* the allocator's object */
    struct dl_phdr_info object; /* ... as the loader describes it (it stays loaded) */
    uintptr_t lo, hi;           /* ... its extent */
    /* qaudit attach: how many modules bind each entry point into the allocator (no attach can
     * redirect them: the shim is not there), counted afresh at each scan; a few of them. */
    unsigned bound[QAUDIT_MAX_ENTRIES];
    const char *last_binder[QAUDIT_MAX_ENTRIES];
    char binders[3][200];
    unsigned binder_count;
};
static struct found found[QAUDIT_FAMILIES];

/* A shim's code: its frames are left out of the stacks of the blocks it reports. */
static void note_shim_code(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
            qa_extra_add_shim_code(info->dlpi_addr + ph->p_vaddr,
                                   info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
    }
}

static void extent(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && start < *lo)
            *lo = start;
        if (ph->p_type == PT_LOAD && start + ph->p_memsz > *hi)
            *hi = start + ph->p_memsz;
    }
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    bool shim = qa_object_defines(info, QAUDIT_SHIM_MARKER);
    if (shim)
        note_shim_code(info);
    for (unsigned f = 0; f < QAUDIT_FAMILIES; f++) {
        if (!qa_object_defines(info, families[f].marker))
            continue;
        if (shim) {
            found[f].shim_loaded = true;
            continue;
        }
        if (found[f].present)
            continue;
        found[f].present = true;
        found[f].interposed = found[f].shim_loaded; /* the shim came first in search order */
        qa_object_path(info, found[f].library, sizeof found[f].library);
        found[f].object = *info;
        extent(info, &found[f].lo, &found[f].hi);
    }
    return 0;
}

static void say_what_is_missed(unsigned f, bool attached)
{
    const struct family *fam = &families[f];
    if (attached) /* qaudit attach says it, on its own output (qa_allocators_unreached) */
        return;
    if (found[f].present && !found[f].interposed)
        qa_log("%s's own entry points (%s...) in %s are not interposed: calls to them are not "
               "counted; preload %s right after libqaudit-preload.so (qaudit run does)",
               fam->name, fam->marker, found[f].library, fam->shim);
    else if (found[f].shim_loaded && !found[f].present)
        qa_log("%s is loaded but %s is not: its %s entry points fail; take it out of LD_PRELOAD",
               fam->shim, fam->name, fam->marker);
}

void qa_allocators_detect(bool attached)
{
    memset(found, 0, sizeof found);
    dl_iterate_phdr(visit, NULL);
    for (unsigned f = 0; f < QAUDIT_FAMILIES; f++)
        say_what_is_missed(f, attached);
}

/* ---- qaudit attach: the entry points of an allocator no attach reaches ---- */

/* The entry (index in qa_extra_entry_names) a symbol of family f is, or -1: the C++ operators
 * by their mangled names (every form), the family's own by name. */
static int entry_of(unsigned f, const char *symbol)
{
    static const char *const operators[QAUDIT_OPERATOR_COUNT] = {"_Znwm", "_Znam", "_ZdlPv",
                                                                 "_ZdaPv"};
    if (symbol[0] == '_' && symbol[1] == 'Z') {
        for (int e = 0; e < QAUDIT_OPERATOR_COUNT; e++)
            if (strncmp(symbol, operators[e], strlen(operators[e])) == 0)
                return e;
        return -1;
    }
    for (unsigned e = QAUDIT_OPERATOR_COUNT; e < qa_extra_entry_count[f]; e++)
        if (strcmp(symbol, qa_extra_entry_names[f][e]) == 0)
            return (int)e;
    return -1;
}

void qa_allocators_bindings_begin(void)
{
    for (unsigned f = 0; f < QAUDIT_FAMILIES; f++) {
        memset(found[f].bound, 0, sizeof found[f].bound);
        memset(found[f].last_binder, 0, sizeof found[f].last_binder);
        found[f].binder_count = 0;
    }
}

/* A binding into the allocator: the entry resolved to an address inside it, or not resolved
 * yet (a lazy PLT entry still pointing into its own module) and defined by it, where the
 * loader will bind it at the first call (unless an object before it defines the name too: then
 * said of the allocator when it was not its, the safe side). */
static bool binds_into(unsigned f, const char *symbol, uintptr_t value, bool unresolved)
{
    if (unresolved)
        return qa_object_defines(&found[f].object, symbol);
    return value >= found[f].lo && value < found[f].hi;
}

void qa_allocators_binding(const char *module, const char *symbol, uintptr_t value, bool unresolved)
{
    for (unsigned f = 0; f < QAUDIT_FAMILIES; f++) {
        if (!found[f].present || found[f].interposed)
            continue;
        int e = entry_of(f, symbol);
        /* the allocator's own calls of its entry points are inside an uncounted call already */
        if (e < 0 || found[f].last_binder[e] == module || strcmp(module, found[f].library) == 0 ||
            !binds_into(f, symbol, value, unresolved))
            continue;
        found[f].last_binder[e] = module;
        if (module[0] == '\0') /* the main program: the loader names it "" */
            module = qa_exe_path();
        found[f].bound[e]++;
        bool listed = false;
        for (unsigned i = 0; i < found[f].binder_count; i++)
            listed |= strcmp(found[f].binders[i], module) == 0;
        if (!listed && found[f].binder_count < 3)
            snprintf(found[f].binders[found[f].binder_count++], sizeof found[f].binders[0], "%s",
                     module);
    }
}

/* The entries of family f, bound (true) or not, joined by ", " into out. */
static void entry_list(unsigned f, bool bound, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (unsigned e = 0; e < qa_extra_entry_count[f] && used < size; e++)
        if ((found[f].bound[e] > 0) == bound)
            used += (size_t)snprintf(out + used, size - used, "%s%s", used ? ", " : "",
                                     qa_extra_entry_names[f][e]);
}

bool qa_allocators_unreached(unsigned f, char *out, size_t size)
{
    if (f >= QAUDIT_FAMILIES || !found[f].present || found[f].interposed)
        return false;
    char bound[256], free_[256], binders[400] = "";
    entry_list(f, true, bound, sizeof bound);
    entry_list(f, false, free_, sizeof free_);
    size_t used = 0;
    for (unsigned i = 0; i < found[f].binder_count && used < sizeof binders; i++) {
        const char *slash = strrchr(found[f].binders[i], '/');
        used += (size_t)snprintf(binders + used, sizeof binders - used, "%s%s", i ? ", " : "",
                                 slash ? slash + 1 : found[f].binders[i]);
    }
    if (bound[0] != '\0')
        snprintf(out, size,
                 "not counted: %s's own entry points in %s, which an attach cannot reach (qaudit "
                 "run can): %s, bound now by %s; and %s if a module calls them",
                 families[f].name, found[f].library, bound, binders, free_);
    else
        snprintf(out, size,
                 "not counted: %s's own entry points in %s, which an attach cannot reach (qaudit "
                 "run can): %s, none bound by a module now",
                 families[f].name, found[f].library, free_);
    return true;
}

static void write_family(struct qa_json *j, unsigned f)
{
    qa_json_key(j, families[f].name);
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(library)), qa_json_str(j, found[f].library);
    qa_json_key(j, QA_KEY(interposed)), qa_json_bool(j, found[f].interposed);
    qa_json_key(j, QA_KEY(shim_loaded)), qa_json_bool(j, found[f].shim_loaded);
    qa_json_key(j, QA_KEY(calls));
    qa_json_begin_object(j);
    for (unsigned e = 0; e < qa_extra_entry_count[f]; e++)
        qa_json_key(j, qa_extra_entry_names[f][e]), qa_json_u64(j, qa_extra_calls(f, e));
    qa_json_end_object(j);
    if (qa_is_attached_image() && found[f].present && !found[f].interposed) {
        /* qaudit attach: each entry point (none reached) and how many modules bind it */
        qa_json_key(j, QA_KEY(attach_unreached));
        qa_json_begin_object(j);
        for (unsigned e = 0; e < qa_extra_entry_count[f]; e++)
            qa_json_key(j, qa_extra_entry_names[f][e]), qa_json_u64(j, found[f].bound[e]);
        qa_json_end_object(j);
        qa_json_key(j, QA_KEY(attach_unreached_bound_by));
        qa_json_begin_array(j);
        for (unsigned i = 0; i < found[f].binder_count; i++)
            qa_json_str(j, found[f].binders[i]);
        qa_json_end_array(j);
    }
    qa_json_end_object(j);
}

/* precision.allocators (the families in the process) and precision.uninterposed_allocators. */
bool qa_allocators_write(struct qa_json *j)
{
    bool all_seen = true;
    qa_json_key(j, QA_KEY(allocators));
    qa_json_begin_object(j);
    for (unsigned f = 0; f < QAUDIT_FAMILIES; f++)
        if (found[f].present || found[f].shim_loaded)
            write_family(j, f);
    qa_json_end_object(j);
    qa_json_key(j, QA_KEY(uninterposed_allocators));
    qa_json_begin_array(j);
    for (unsigned f = 0; f < QAUDIT_FAMILIES; f++)
        if (found[f].present && !found[f].interposed) {
            qa_json_str(j, families[f].name);
            all_seen = false;
        }
    qa_json_end_array(j);
    return all_seen;
}
