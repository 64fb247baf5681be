/* The allocators with entry points of their own (jemalloc's mallocx, tcmalloc's tc_*,
 * mimalloc's mi_*) loaded at start-up, and whether a qaudit shim interposes each: the link map
 * is walked in symbol search order, and the first object defining the family's marker symbol is
 * the one the program's calls reach. When that is not a shim, the family's own calls are not
 * counted: said once on stderr, and the dump is not exact.
 * Context: start-up only. */
#include <string.h>
#include <unistd.h>

#include "records.h"

struct family {
    const char *name, *marker, *shim;
};
static const struct family families[QAUDIT_FAMILIES] = {
    [QAUDIT_JEMALLOC] = {"jemalloc", "mallocx", "libqaudit-jemalloc.so"},
    [QAUDIT_TCMALLOC] = {"tcmalloc", "tc_malloc", "libqaudit-tcmalloc.so"},
    [QAUDIT_MIMALLOC] = {"mimalloc", "mi_malloc", "libqaudit-mimalloc.so"},
};

struct found {
    bool present;      /* an object other than a shim defines the marker */
    bool interposed;   /* ... and the family's shim comes before it */
    bool shim_loaded;  /* the family's shim is in the process */
    char library[200]; /* the allocator's object */
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
    }
    return 0;
}

static void say_what_is_missed(unsigned f)
{
    const struct family *fam = &families[f];
    if (found[f].present && !found[f].interposed)
        qa_log("%s's own entry points (%s...) in %s are not interposed: calls to them are not "
               "counted; preload %s right after libqaudit-preload.so (qaudit run does)",
               fam->name, fam->marker, found[f].library, fam->shim);
    else if (found[f].shim_loaded && !found[f].present)
        qa_log("%s is loaded but %s is not: its %s entry points fail; take it out of LD_PRELOAD",
               fam->shim, fam->name, fam->marker);
}

void qa_allocators_detect(void)
{
    memset(found, 0, sizeof found);
    dl_iterate_phdr(visit, NULL);
    for (unsigned f = 0; f < QAUDIT_FAMILIES; f++)
        say_what_is_missed(f);
}

static void write_family(struct qa_json *j, unsigned f)
{
    qa_json_key(j, families[f].name);
    qa_json_begin_object(j);
    qa_json_key(j, "library"), qa_json_str(j, found[f].library);
    qa_json_key(j, "interposed"), qa_json_bool(j, found[f].interposed);
    qa_json_key(j, "shim_loaded"), qa_json_bool(j, found[f].shim_loaded);
    qa_json_key(j, "calls");
    qa_json_begin_object(j);
    for (unsigned e = 0; e < qa_extra_entry_count[f]; e++)
        qa_json_key(j, qa_extra_entry_names[f][e]), qa_json_u64(j, qa_extra_calls(f, e));
    qa_json_end_object(j);
    qa_json_end_object(j);
}

/* precision.allocators (the families in the process) and precision.uninterposed_allocators. */
bool qa_allocators_write(struct qa_json *j)
{
    bool all_seen = true;
    qa_json_key(j, "allocators");
    qa_json_begin_object(j);
    for (unsigned f = 0; f < QAUDIT_FAMILIES; f++)
        if (found[f].present || found[f].shim_loaded)
            write_family(j, f);
    qa_json_end_object(j);
    qa_json_key(j, "uninterposed_allocators");
    qa_json_begin_array(j);
    for (unsigned f = 0; f < QAUDIT_FAMILIES; f++)
        if (found[f].present && !found[f].interposed) {
            qa_json_str(j, families[f].name);
            all_seen = false;
        }
    qa_json_end_array(j);
    return all_seen;
}
