/* Wrappers folded away: a program's own allocation wrappers (zmalloc, xmalloc, g_malloc, operator
 * new...) and its runtime's (OpenSSL's, the JVM's, V8's, Ruby's, Lua's, Rust's alloc::alloc)
 * would otherwise be every site's first frame. Leading frames whose functions match the skip
 * globs are dropped, then those of the wrappers the stacks show (wrappers.c), and sites left with
 * the same stack become one; --skip's own globs drop a frame wherever it is and everything inside
 * it, as pprof's drop_frames does. Runs after symbolization: it matches function names. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "reports_reading.h"

const char *const report_default_skip[] = {"zmalloc*",
                                           "ztrymalloc*",
                                           "zcalloc*",
                                           "ztrycalloc*",
                                           "zrealloc*",
                                           "ztryrealloc*",
                                           "zstrdup",
                                           "xmalloc",
                                           "xcalloc",
                                           "xrealloc",
                                           "xzalloc",
                                           "xstrdup",
                                           "xmemdup*",
                                           "g_malloc*",
                                           "g_try_malloc*",
                                           "g_realloc*",
                                           "g_try_realloc*",
                                           "g_strdup*",
                                           "g_slice_alloc*",
                                           "operator new*",
                                           "*::operator new*", /* a class's own */
                                           "CRYPTO_*alloc",    /* OpenSSL */
                                           "CRYPTO_strdup",
                                           "CRYPTO_strndup",
                                           "CRYPTO_memdup",
                                           "os::malloc", /* the JVM (HotSpot) */
                                           "os::realloc",
                                           "os::strdup*",
                                           "AllocateHeap",
                                           "ReallocateHeap",
                                           "NMTPreInitAllocation::do_*",
                                           "JLI_MemAlloc",
                                           "v8::internal::*AllocWithRetry", /* V8 and Node.js */
                                           "node::UncheckedMalloc*",
                                           "node::UncheckedCalloc*",
                                           "node::UncheckedRealloc*",
                                           "ruby_xmalloc*", /* Ruby */
                                           "ruby_xcalloc*",
                                           "ruby_xrealloc*",
                                           "objspace_xmalloc*",
                                           "objspace_xcalloc",
                                           "objspace_xrealloc",
                                           "alloc::alloc::alloc", /* Rust's */
                                           "alloc::alloc::alloc_zeroed",
                                           "alloc::alloc::realloc",
                                           "alloc::alloc::exchange_malloc",
                                           "alloc::alloc::Global::*",
                                           "alloc::boxed::box_new_uninit",
                                           "<alloc::alloc::Global as core::alloc::Allocator>::*",
                                           "__rust_alloc*",
                                           "__rust_realloc",
                                           "__rdl_alloc*",
                                           "__rdl_realloc",
                                           "*GlobalAlloc for std::alloc::System>::*",
                                           "<std::alloc::System as *GlobalAlloc>::*",
                                           "luaM_malloc_", /* Lua */
                                           "luaM_realloc_",
                                           "l_alloc",
                                           "je_*",
                                           "Perl_safesys*",
                                           "PyMem_Raw*",
                                           "__gnu_cxx::new_allocator*",
                                           "std::__new_allocator*",
                                           "std::allocator_traits*",
                                           NULL};

bool report_is_wrapper(const struct report *r, const char *function)
{
    if (function == NULL)
        return false;
    for (size_t i = 0; i < r->skip_count; i++)
        if (fnmatch(r->skip[i], function, 0) == 0)
            return true;
    for (size_t i = 0; i < r->wrapper_count; i++)
        if (r->wrappers[i].named && strcmp(r->wrappers[i].name, function) == 0)
            return true;
    return false;
}

/* A frame is a wrapper when every function in it (the inlined ones too) is, or when it is one
 * recognised from the stacks. */
static bool wrapper_frame(const struct report *r, const struct report_frame *f)
{
    if (report_wrapper_recognised(r, f))
        return true;
    if (f->location_count == 0)
        return false;
    for (size_t i = 0; i < f->location_count; i++)
        if (!report_is_wrapper(r, f->locations[i].function))
            return false;
    return true;
}

/* Whether a location of f matches one of --skip's own globs. */
static bool user_skipped(const struct report *r, const struct report_frame *f)
{
    for (size_t l = 0; l < f->location_count; l++)
        for (size_t i = r->user_skip; f->locations[l].function && i < r->skip_count; i++)
            if (fnmatch(r->skip[i], f->locations[l].function, 0) == 0)
                return true;
    return false;
}

/* How many leading frames of stack fold: up to its last wrapper frame among those leading frames
 * that are wrappers or the C and C++ runtime's (strdup called by a wrapper goes with it), and up
 * to the outermost frame --skip names, whatever lies inside it. */
static size_t frames_folded(const struct report *r, const struct report_stack *stack)
{
    size_t k = 0;
    for (size_t i = 0; i < stack->frame_count; i++) {
        const struct report_frame *f = &stack->frames[i];
        if (wrapper_frame(r, f))
            k = i + 1;
        else if (!report_runtime_frame(r, f))
            break;
    }
    for (size_t i = stack->frame_count; r->user_skip < r->skip_count && i-- > k;)
        if (user_skipped(r, &stack->frames[i]))
            return i + 1;
    return k;
}

/* The name of a folded frame, as the report names the wrapper it went through. */
static char *frame_name(const struct report *r, const struct report_frame *f)
{
    if (f->location_count > 0 && f->locations[f->location_count - 1].function != NULL)
        return report_copy_string(f->locations[f->location_count - 1].function);
    char name[512];
    report_frame_describe(r, f, name, sizeof name);
    return report_copy_string(name);
}

/* Drops a site's folded frames, unless every frame would go (shallow stacks keep what they
 * have); the outermost of them names the wrapper. */
static void fold_site(const struct report *r, struct report_site *s)
{
    struct report_stack *stack = &s->stack;
    size_t k = frames_folded(r, stack);
    if (k == 0 || k == stack->frame_count)
        return;
    free(s->wrapper);
    s->wrapper = frame_name(r, &stack->frames[k - 1]);
    for (size_t i = 0; i < k; i++)
        report_locations_free(stack->frames[i].locations, stack->frames[i].location_count);
    memmove(stack->frames, stack->frames + k, (stack->frame_count - k) * sizeof *stack->frames);
    stack->frame_count -= k;
    s->folded += k;
}

/* Merges sites whose stacks are now the same into the first of them; returns how many went. */
static size_t merge_same(struct report *r)
{
    size_t slots = 16;
    while (slots < 2 * r->site_count)
        slots *= 2;
    size_t *index = malloc(slots * sizeof *index);
    if (index == NULL)
        return 0;
    memset(index, 0xff, slots * sizeof *index);
    size_t kept = 0;
    for (size_t i = 0; i < r->site_count; i++) {
        struct report_site *s = &r->sites[i];
        size_t slot = report_stack_hash(&s->stack) & (slots - 1);
        while (index[slot] != SIZE_MAX &&
               !report_same_stack(&r->sites[index[slot]].stack, &s->stack))
            slot = (slot + 1) & (slots - 1);
        if (index[slot] == SIZE_MAX) {
            index[slot] = kept;
            r->sites[kept++] = *s;
            continue;
        }
        struct report_site *into = &r->sites[index[slot]];
        report_site_add(into, s);
        into->program = report_programs_joined(into->program, s->program);
        into->folded = into->folded > s->folded ? into->folded : s->folded;
        if (into->wrapper == NULL) {
            into->wrapper = s->wrapper;
            s->wrapper = NULL;
        }
        report_stack_free(&s->stack);
        free(s->wrapper);
    }
    free(index);
    size_t merged = r->site_count - kept;
    r->site_count = kept;
    return merged;
}

/* Most allocations first, then most bytes, then the order read: site numbers read in the order
 * of the first ranking every report shows. */
static int by_allocations(const void *a, const void *b)
{
    const struct report_site *x = *(const struct report_site *const *)a;
    const struct report_site *y = *(const struct report_site *const *)b;
    if (x->est.allocs != y->est.allocs)
        return x->est.allocs > y->est.allocs ? -1 : 1;
    if (x->est.bytes != y->est.bytes)
        return x->est.bytes > y->est.bytes ? -1 : 1;
    return x < y ? -1 : x > y;
}

static void order_sites(struct report *r)
{
    const struct report_site **order = malloc((r->site_count + 1) * sizeof *order);
    struct report_site *sorted = malloc((r->site_count + 1) * sizeof *sorted);
    for (size_t i = 0; order && sorted && i < r->site_count; i++)
        order[i] = &r->sites[i];
    if (order != NULL && sorted != NULL) {
        qsort(order, r->site_count, sizeof *order, by_allocations);
        for (size_t i = 0; i < r->site_count; i++)
            sorted[i] = *order[i];
        memcpy(r->sites, sorted, r->site_count * sizeof *sorted); /* in place: its room stays */
    }
    free(order);
    free(sorted);
}

void report_fold_alike(struct report *r, const struct report *other)
{
    if (!r->symbolized || report_wrappers_adopt(r, other) == 0)
        return;
    for (size_t i = 0; i < r->site_count; i++)
        fold_site(r, &r->sites[i]);
    r->folded_sites += merge_same(r);
    report_by_design_mark(r);
    order_sites(r);
}

void report_fold(struct report *r, const struct report_fold_settings *settings)
{
    size_t before = r->skip_count;
    for (size_t i = 0; i < settings->glob_count; i++)
        report_push_string(&r->skip, &r->skip_count, &r->skip_capacity, "%s", settings->globs[i]);
    r->user_skip = before + settings->user_from;
    r->user_skip = r->user_skip < r->skip_count ? r->user_skip : r->skip_count;
    if (r->symbolized && r->site_count > 0) {
        for (size_t i = 0; i < r->site_count; i++)
            fold_site(r, &r->sites[i]);
        if (settings->recognise) {
            report_wrappers_recognise(r);
            for (size_t i = 0; r->wrapper_count > 0 && i < r->site_count; i++)
                fold_site(r, &r->sites[i]);
        }
        r->folded_sites = merge_same(r);
    }
    report_by_design_mark(r);
    order_sites(r);
}
