/* Runtimes and interpreters that hide objects from an interposed malloc, told from a dump's facts
 * alone (its executable, modules, PYTHONMALLOC and small allocations): the reading room's part of
 * what interpreters.c says in sentences. Why the thresholds: see interpreters.c. */
#include <string.h>

#include "reports_reading.h"

#define PYTHON_SMALL_COUNTED 5000 /* small allocations that pymalloc would have kept... */
#define PYTHON_SMALL_SHARE 0.75   /* ...and their share of the allocation calls */

bool report_process_is_python(const struct report_process *p)
{
    const char *base = strrchr(p->exe, '/');
    return strncmp(base ? base + 1 : p->exe, "python", 6) == 0;
}

bool report_python_objects_counted(const struct report_process *p)
{
    /* The dump says: PYTHONMALLOC's "malloc" and "malloc_debug" send every object to malloc; any
     * other value (pymalloc, pymalloc_debug, debug, default) keeps pymalloc's arenas. */
    if (p->pythonmalloc != NULL)
        return strncmp(p->pythonmalloc, "malloc", 6) == 0;
    return p->small_allocs >= PYTHON_SMALL_COUNTED &&
           (double)p->small_allocs >= PYTHON_SMALL_SHARE * (double)p->alloc_calls;
}

uint64_t report_small_allocs(const struct report *r)
{
    uint64_t small = 0;
    for (size_t i = 0; i < r->requested_count; i++)
        if (r->requested_sizes[i].to <= 512) /* pymalloc's limit */
            small += r->requested_sizes[i].count;
    return small;
}

static const struct {
    const char *module, *exe; /* a module's file name prefix, or the executable's name */
    const char *section;      /* or a section of the executable's file */
    const char *name, *objects;
} runtimes[] = {
    {NULL, NULL, NULL, NULL, NULL}, /* 0: none */
    {"libjvm.so", NULL, NULL, "the JVM", "Java objects"},
    {"libnode.so", "node", NULL, "V8 (Node.js)", "JavaScript objects"},
    {NULL, "nodejs", NULL, "V8 (Node.js)", "JavaScript objects"},
    {"libcoreclr.so", NULL, NULL, ".NET's CoreCLR", ".NET objects"},
    {NULL, NULL, ".note.go.buildid", "the Go runtime", "Go values"}, /* built with cgo */
};
#define RUNTIMES (sizeof runtimes / sizeof runtimes[0])

unsigned report_runtime_of_dump(const struct report *dump)
{
    const char *path =
        dump->process_count && dump->processes[0].exe != NULL ? dump->processes[0].exe : "";
    const char *exe = report_path_base_name(path);
    for (unsigned k = 1; k < RUNTIMES; k++) {
        if (runtimes[k].exe != NULL && strcmp(exe, runtimes[k].exe) == 0)
            return k;
        if (runtimes[k].section != NULL && path[0] == '/' &&
            report_elf_file_has_section(path, runtimes[k].section))
            return k;
        for (size_t m = 0; runtimes[k].module != NULL && m < dump->module_count; m++)
            if (strncmp(report_path_base_name(dump->modules[m].path), runtimes[k].module,
                        strlen(runtimes[k].module)) == 0)
                return k;
    }
    return 0;
}

const char *report_runtime_name(unsigned runtime)
{
    return runtime < RUNTIMES ? runtimes[runtime].name : NULL;
}

const char *report_runtime_objects(unsigned runtime)
{
    return runtime < RUNTIMES ? runtimes[runtime].objects : NULL;
}
