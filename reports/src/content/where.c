/* The frame worth naming for a site, its "where": the first frame outside the C and C++ runtime
 * and the allocation wrappers (report_fold took the wrappers' frames away; a wrapper inlined
 * into its caller is skipped here). In C++ that is the program's own code, not the standard
 * library's inlined containers: "std::map<std::string, std::vector<int>>::operator[] <- serve
 * (cx.cpp:10)" names the container the program called and the line that called it. A frame
 * without a function name is followed by the first caller that has one. */
#include <stdio.h>
#include <string.h>

#include "reports_content.h"

static bool starts_with(const char *s, const char *prefix)
{
    return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A function of the C++ standard library (a container's member, an allocator's). */
static bool standard_function(const char *function)
{
    return starts_with(function, "std::") || starts_with(function, "__gnu_cxx::");
}

/* A location that is not the program's own code: the standard library's, or any function
 * inlined from the system's headers. */
static bool library_location(const struct report_location *l)
{
    return standard_function(l->function) || starts_with(l->file, "/usr/include/") ||
           starts_with(l->file, "/usr/lib/gcc/") || starts_with(l->file, "/usr/lib/llvm");
}

/* In the leaf frame, the wrappers inlined into their caller are passed over (one location
 * stays). */
static size_t first_location(const struct report *r, const struct report_frame *f)
{
    size_t first = 0;
    while (first + 1 < f->location_count && report_is_wrapper(r, f->locations[first].function))
        first++;
    return first;
}

/* " <- caller" for the first frame after frame i that has a function name, when frame i has
 * none; nothing otherwise. */
static void named_caller(const struct report *r, const struct report_stack *stack, size_t i,
                         bool long_names, char *out, size_t size)
{
    out[0] = '\0';
    if (stack->frames[i].location_count > 0)
        return;
    for (size_t k = i + 1; k < stack->frame_count; k++) {
        const struct report_frame *f = &stack->frames[k];
        if (f->location_count == 0 || report_runtime_frame(r, f))
            continue;
        char caller[1024];
        report_frame_describe_level(r, f, 0, !long_names, caller, sizeof caller);
        snprintf(out, size, " <- %s", caller);
        return;
    }
}

/* The site's own frame as the tables name it: the program's first location with the standard
 * container it called before it (container: the outermost standard function met on the way, or
 * NULL). False when every frame is the runtime's, a wrapper's or the library's. */
static bool program_where(const struct report *r, const struct report_stack *stack, bool long_names,
                          char *out, size_t size)
{
    const char *container = NULL;
    for (size_t i = 0; i < stack->frame_count; i++) {
        const struct report_frame *f = &stack->frames[i];
        size_t first = first_location(r, f);
        for (size_t l = first; l < f->location_count; l++) {
            const struct report_location *at = &f->locations[l];
            bool library = report_runtime_frame(r, f) || library_location(at);
            if (library && standard_function(at->function))
                container = at->function;
            if (library)
                continue;
            if (l + 1 == f->location_count && report_is_wrapper(r, at->function) &&
                i + 1 < stack->frame_count)
                break; /* a wrapper frame the fold kept (shallow stacks): look further */
            char own[1024], prefix[1024] = "";
            report_frame_describe_level(r, f, l, !long_names, own, sizeof own);
            if (container != NULL) {
                char name[1024];
                snprintf(prefix, sizeof prefix, "%s <- ",
                         long_names ? container : report_short_name(container, name, sizeof name));
            }
            snprintf(out, size, "%s%s", prefix, own);
            return true;
        }
        if (f->location_count == 0 && !report_runtime_frame(r, f)) {
            char own[512], caller[1100];
            report_frame_describe(r, f, own, sizeof own);
            named_caller(r, stack, i, long_names, caller, sizeof caller);
            snprintf(out, size, "%s%s", own, caller);
            return true;
        }
    }
    return false;
}

void report_site_where(const struct report *r, const struct report_site *s, bool long_names,
                       char *out, size_t size)
{
    const struct report_stack *stack = &s->stack;
    if (stack->frame_count == 0) {
        snprintf(out, size, "(no stack)");
        return;
    }
    if (!program_where(r, stack, long_names, out, size))
        report_frame_describe_level(r, &stack->frames[0], 0, !long_names, out, size);
}
