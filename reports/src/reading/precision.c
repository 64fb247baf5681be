/* How far a report's figures can be trusted: `partial` when some allocations or frees may be
 * missing from them (a process without a final dump, allocators the preload could not see,
 * blocks or sites it could not hold), with a note for each reason, and notes for what is only
 * approximate (sampled sites, truncated stacks, the peak of several threads). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "reports_reading.h"

static void add_note(struct report *r, const char *fmt, va_list ap)
{
    char **slot =
        array_push(&r->trust.notes, &r->trust.note_count, &r->trust.note_capacity, sizeof *slot);
    if (slot != NULL && vasprintf(slot, fmt, ap) < 0)
        *slot = NULL;
}

/* A reason some allocations or frees may be missing from the figures. */
__attribute__((format(printf, 2, 3))) static void partial(struct report *r, const char *fmt, ...)
{
    r->trust.partial = true;
    va_list ap;
    va_start(ap, fmt);
    add_note(r, fmt, ap);
    va_end(ap);
}

/* Something approximate that the figures say themselves (estimates, truncation). */
__attribute__((format(printf, 2, 3))) static void note(struct report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_note(r, fmt, ap);
    va_end(ap);
}

/* A count as the rest of the report writes it: "10,298". */
#define N(n) report_fmt_count((char[32]){0}, 32, (n))

/* A process counted from a qaudit attach to its detach: the detach dump is the last of that
 * count, which is whole; what the process did before the attach and after the detach is outside
 * it, as the attach meant. */
static void note_attached(struct report *r, const struct report_process *p, const char *name)
{
    double seconds = p->dump_time_ns > p->attached_at_ns
                         ? (double)(p->dump_time_ns - p->attached_at_ns) / 1e9
                         : 0;
    note(r,
         "%s (pid %" PRIu64 ") was counted from its qaudit attach to its detach (%.1f s; the "
         "detach dump is the last of them): what it did before the attach and after the detach "
         "is not in these figures.",
         name, p->pid, seconds);
}

/* A delta (report_load_delta) is whole between its two dumps: neither "no final dump" nor an
 * attach's span applies to it. */
static void assess_processes(struct report *r)
{
    for (size_t i = 0; i < r->process_count && r->delta_from_ns == 0; i++) {
        const struct report_process *p = &r->processes[i];
        char name[256];
        program_name(p->argv, p->exe, name, sizeof name);
        if (p->attached_at_ns != 0 && strcmp(p->reason, "detach") == 0)
            note_attached(r, p, name);
        else if (!p->final)
            partial(r,
                    "%s (pid %" PRIu64 ") has no final dump here, only a snapshot: what it did "
                    "after the snapshot is not counted.",
                    name, p->pid);
    }
}

static void assess_sampling(struct report *r)
{
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        if (p->sampling == SAMPLING_NONE)
            continue;
        char name[256];
        program_name(p->argv, p->exe, name, sizeof name);
        note(r,
             "Sites of pid %" PRIu64 " (%s, stacks sampled:%" PRIu64 "%s) are estimates: the "
             "samples scaled by the sampling rate, with a 99 %% range.",
             p->pid, name, p->sample_every, p->sampling == SAMPLING_BYTES ? "b" : "");
        if (p->sampling_inferred)
            note(r,
                 "The dump of pid %" PRIu64 " does not say whether it sampled by count or "
                 "by bytes (config.sample_by_bytes): the report inferred it from the number "
                 "of samples.",
                 p->pid);
    }
    if (r->mean_size_estimates > 0)
        note(r,
             "%s byte-sampled sites have their allocations estimated from their mean "
             "sampled size (the dumps carry no sites[].allocs_estimate): larger blocks are "
             "sampled more often, so where a site's sizes vary its allocations are "
             "underestimated; its bytes are not.",
             N(r->mean_size_estimates));
    if (r->sampled_large_sites > 0)
        note(r,
             "%s sampled sites allocate blocks of the sampling period or more: under "
             "a fixed byte countdown each such block also makes the allocations right after it "
             "sampled, so the estimates of other sites may be high.",
             N(r->sampled_large_sites));
}

/* What an attach said of allocator name's entry points ("operator new, ... bound by
 * libstdc++.so.6", or "none bound now"), or NULL when no dump was an attach's. */
static const char *attach_unreached_of(const struct report_precision *p, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < p->attach_unreached_count; i++) {
        const char *s = p->attach_unreached[i];
        if (strncmp(s, name, n) == 0 && s[n] == ':' && s[n + 1] == ' ')
            return strcmp(s + n + 2, "none bound") == 0 ? "no module of the process binds them"
                                                        : s + n + 2;
    }
    return NULL;
}

static void assess_unseen(struct report *r)
{
    const struct report_precision *p = &r->precision;
    for (size_t i = 0; i < p->uninterposed_count; i++) {
        const char *attached = attach_unreached_of(p, p->uninterposed_allocators[i]);
        if (attached != NULL)
            partial(r,
                    "Calls to %s's own entry points were not counted: qaudit attach cannot "
                    "reach them (qaudit run can, with its shim); %s.",
                    p->uninterposed_allocators[i], attached);
        else
            partial(r,
                    "Calls to %s's own entry points were not counted: no allocator shim "
                    "interposed them (qaudit run adds it; see docs/dump-format.md).",
                    p->uninterposed_allocators[i]);
    }
    for (size_t i = 0; i < p->unreachable_count; i++)
        partial(r,
                "%s: calls to it were not counted, since the program's calls bind to it when "
                "it is linked, where no preload can reach them. Built with the C library's "
                "malloc (redis: make MALLOC=libc), the program can be audited.",
                p->unreachable_allocators[i]);
    if (p->unexplained_anonymous > 0) {
        char bytes[64];
        report_fmt_bytes(bytes, sizeof bytes, p->unexplained_bytes);
        if (r->delta_from_ns != 0) /* a delta: the later dump's growth since the start */
            partial(r,
                    "By the later dump anonymous memory had grown by %s more than the counted "
                    "peak since the start: an allocator the preload could not see (statically "
                    "linked, private mmap arenas, loaded later) made most of the heap; how much "
                    "of it in this window is not known.",
                    bytes);
        else
            partial(r,
                    "Anonymous memory grew by %s more than the counted peak in %s dump%s: an "
                    "allocator the preload could not see (statically linked, private mmap arenas, "
                    "loaded later) made most of the heap.",
                    bytes, N(p->unexplained_anonymous), p->unexplained_anonymous == 1 ? "" : "s");
    }
    for (size_t i = 0; i < p->deepbind_count; i++)
        partial(r,
                "%s was loaded with RTLD_DEEPBIND: its own allocator calls may bypass the "
                "interposer.",
                p->deepbind_libraries[i]);
}

static void assess_tables(struct report *r)
{
    const struct report_precision *p = &r->precision;
    if (p->blocks_untracked)
        partial(r,
                "%s blocks did not fit the live-block table: their frees are not "
                "credited to their sites, whose live bytes are then too high.",
                N(p->blocks_untracked));
    if (p->sites_dropped)
        partial(r,
                "%s allocations went to the overflow site (more than 65,536 "
                "distinct stacks).",
                N(p->sites_dropped));
    if (p->stacks_truncated)
        note(r,
             "%s stacks were cut at the stack depth: sites that differ only deeper "
             "are one.",
             N(p->stacks_truncated));
    if (p->usable_sizes_dropped)
        note(r, "%s usable sizes did not fit the usable-size histogram.",
             N(p->usable_sizes_dropped));
    if (p->modules_dropped)
        note(r, "%s modules beyond 128 were dropped: frames in them stay addresses.",
             N(p->modules_dropped));
    if (p->modules_unknown)
        note(r,
             "%s dump%s written before any module map was gathered: %s frames cannot be "
             "symbolized.",
             N(p->modules_unknown), p->modules_unknown == 1 ? " was" : "s were",
             p->modules_unknown == 1 ? "its" : "their");
    if (p->peak_live_bytes_within && r->delta_from_ns == 0) { /* a delta has no peak */
        char within[64];
        report_fmt_bytes(within, sizeof within, p->peak_live_bytes_within);
        note(r, "The peak of live bytes is within %s: threads publish live bytes in batches.",
             within);
    }
}

/* Python: whether its objects reached malloc, read from the sizes; a runtime with a heap of its
 * own: its objects never do (runtimes.c). */
static void assess_interpreters(struct report *r)
{
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        if (p->runtime != 0)
            note(r,
                 "pid %" PRIu64 " runs %s: its %s live in a heap it maps and collects itself, "
                 "which no malloc interposer sees; the figures here are its native allocations.",
                 p->pid, report_runtime_name(p->runtime), report_runtime_objects(p->runtime));
        if (!report_process_is_python(p))
            continue;
        char small[32], calls[32];
        report_fmt_count(small, sizeof small, p->small_allocs);
        report_fmt_count(calls, sizeof calls, p->alloc_calls);
        if (p->pythonmalloc != NULL && report_python_objects_counted(p))
            note(r,
                 "pid %" PRIu64 " is Python: its objects are counted (it ran with "
                 "PYTHONMALLOC=%s, which sends every object to malloc).",
                 p->pid, p->pythonmalloc);
        else if (p->pythonmalloc != NULL)
            partial(r,
                    "pid %" PRIu64 " is Python and ran with PYTHONMALLOC=%s: its objects of 512 "
                    "bytes or less come from Python's own allocator (pymalloc, its default), whose "
                    "arenas no interposed call sees "
                    "(%s of its %s allocation calls are that small). Run it with "
                    "PYTHONMALLOC=malloc.",
                    p->pid, p->pythonmalloc, small, calls);
        else if (p->alloc_calls == 0) /* no call to judge it by (a delta of an idle window) */
            continue;
        else if (report_python_objects_counted(p))
            note(r,
                 "pid %" PRIu64 " is Python: its objects are counted (%s of its %s allocation "
                 "calls are of 512 bytes or less, as when PYTHONMALLOC=malloc sends every object "
                 "to malloc; qaudit run sets it).",
                 p->pid, small, calls);
        else
            partial(r,
                    "pid %" PRIu64 " is Python and its objects of 512 bytes or less are likely "
                    "missing: only %s of its %s allocation calls are that small, as when Python's "
                    "own allocator (pymalloc, its default) serves them from arenas no interposed "
                    "call sees. Run it with PYTHONMALLOC=malloc (qaudit run sets it where "
                    "PYTHONMALLOC is not set).",
                    p->pid, small, calls);
    }
}

void report_assess(struct report *r)
{
    for (size_t i = 0; i < r->trust.note_count; i++)
        free(r->trust.notes[i]);
    free(r->trust.notes);
    r->trust = (struct report_trust){0};
    assess_processes(r);
    assess_unseen(r);
    assess_tables(r);
    assess_sampling(r);
    assess_interpreters(r);
    bool explained = r->trust.partial || r->precision.modules_unknown ||
                     r->precision.usable_sizes_dropped || r->precision.modules_dropped;
    if (r->precision.exact || r->process_count == 0 || explained)
        return;
    if (r->delta_from_ns != 0)
        partial(r, "The later dump says its figures are not exact (precision.exact is false) and "
                   "nothing counted in this window says why: a table that overflowed before it "
                   "(whose blocks' frees may fall in it), or a reason this report does not know.");
    else
        partial(r, "A dump says its figures are not exact (precision.exact is false) for a "
                   "reason this report does not know.");
}
