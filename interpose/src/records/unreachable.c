/* Allocators that no preload and no shim can reach, found at start-up so that the dump does not
 * call itself exact while most of the heap goes unseen: an executable that defines malloc itself
 * (a statically linked tcmalloc or mimalloc override, a sanitizer's runtime, an allocator of its
 * own), and a jemalloc built with the je_ prefix (redis bundles one and exports its names). Calls
 * inside the executable bind to its own functions at link time, so interposing cannot count them;
 * what can be done is to say so, once on stderr and in precision.unreachable_allocators.
 * Context: start-up only. */
#include <stdio.h>
#include <string.h>

#include "records.h"

struct marker {
    const char *symbol, *allocator;
    bool executable_only; /* malloc is every C library's: only the executable's own counts */
};
static const struct marker markers[] = {
    {"malloc", "its own malloc", true},
    {"je_mallocx", "jemalloc built with the je_ prefix", false},
};

enum { UNREACHABLE_MAX = 4 };
static struct unreachable {
    const char *allocator;
    char library[200];
} unreachable[UNREACHABLE_MAX];
static unsigned unreachable_count;

static void note(const char *allocator, const struct dl_phdr_info *info)
{
    if (unreachable_count == UNREACHABLE_MAX)
        return;
    struct unreachable *u = &unreachable[unreachable_count++];
    u->allocator = allocator;
    qa_object_path(info, u->library, sizeof u->library);
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    bool *first = data;
    bool executable = *first; /* dl_iterate_phdr visits the main program first */
    *first = false;
    if (qa_object_defines(info, QAUDIT_SHIM_MARKER))
        return 0;
    for (size_t m = 0; m < sizeof markers / sizeof *markers; m++)
        if ((executable || !markers[m].executable_only) &&
            qa_object_defines(info, markers[m].symbol))
            note(markers[m].allocator, info);
    return 0;
}

void qa_unreachable_detect(bool attached)
{
    unreachable_count = 0;
    bool first = true;
    dl_iterate_phdr(visit, &first);
    for (unsigned i = 0; i < unreachable_count && !attached; i++) /* attach: said there */
        qa_log("%s has %s: its calls never reach the preload and are not counted; to count "
               "them, build it with the C library's malloc (redis: make MALLOC=libc)",
               unreachable[i].library, unreachable[i].allocator);
}

bool qa_unreachable_text(unsigned i, char *out, size_t size)
{
    if (i >= unreachable_count)
        return false;
    snprintf(out, size,
             "not counted: %s has %s, whose calls never reach the preload (build it with the C "
             "library's malloc to count them; redis: make MALLOC=libc)",
             unreachable[i].library, unreachable[i].allocator);
    return true;
}

/* precision.unreachable_allocators; false when there is one. */
bool qa_unreachable_write(struct qa_json *j)
{
    qa_json_key(j, QA_KEY(unreachable_allocators));
    qa_json_begin_array(j);
    for (unsigned i = 0; i < unreachable_count; i++) {
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(allocator)), qa_json_str(j, unreachable[i].allocator);
        qa_json_key(j, QA_KEY(library)), qa_json_str(j, unreachable[i].library);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
    return unreachable_count == 0;
}
