/* The report model's small pieces: stacks, freeing, and the questions every
 * renderer asks of the queue figures. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports_reading.h"

const char *const report_call_names[CALL_COUNT] = {
    "malloc",        "calloc",   "realloc", "reallocarray", "posix_memalign",
    "aligned_alloc", "memalign", "valloc",  "pvalloc",      "free"};

void report_locations_free(struct report_location *locations, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(locations[i].function);
        free(locations[i].file);
    }
    free(locations);
}

void report_stack_free(struct report_stack *stack)
{
    for (size_t i = 0; i < stack->frame_count; i++)
        report_locations_free(stack->frames[i].locations, stack->frames[i].location_count);
    free(stack->frames);
    *stack = (struct report_stack){0};
}

struct report_stack report_stack_copy(const struct report_stack *stack, const uint32_t *module_map)
{
    struct report_stack copy = {calloc(stack->frame_count + 1, sizeof *copy.frames), 0};
    if (copy.frames == NULL)
        return copy;
    for (size_t i = 0; i < stack->frame_count; i++) {
        struct report_frame f = stack->frames[i];
        if (module_map && f.module != REPORT_NO_MODULE)
            f.module = module_map[f.module];
        f.locations = NULL;
        f.location_count = 0;
        copy.frames[copy.frame_count++] = f;
    }
    return copy;
}

void report_site_add(struct report_site *to, const struct report_site *from)
{
    to->allocs += from->allocs;
    to->frees += from->frees;
    to->bytes += from->bytes;
    to->live_bytes += from->live_bytes;
    to->peak_live_bytes += from->peak_live_bytes;
    to->never_written_bytes += from->never_written_bytes;
    to->queue_allocs += from->queue_allocs;
    to->temporary += from->temporary;
    to->inherited_blocks += from->inherited_blocks;
    to->inherited_bytes += from->inherited_bytes;
    to->inherited_freed += from->inherited_freed;
    to->inherited_freed_bytes += from->inherited_freed_bytes;
    to->allocs_estimate += from->allocs_estimate;
    to->bytes_estimate += from->bytes_estimate;
    to->estimated = to->estimated || from->estimated;
    struct report_estimate *e = &to->est;
    const struct report_estimate *f = &from->est;
    e->allocs += f->allocs;
    e->allocs_low += f->allocs_low;
    e->allocs_high += f->allocs_high;
    e->bytes += f->bytes;
    e->bytes_low += f->bytes_low;
    e->bytes_high += f->bytes_high;
    e->frees += f->frees;
    e->live_bytes += f->live_bytes;
    e->live_low += f->live_low;
    e->live_high += f->live_high;
    e->live_blocks += f->live_blocks;
    e->peak_live_bytes += f->peak_live_bytes;
    e->temporary += f->temporary;
}

/* a - b, floored at 0: a later dump's counter less an earlier one's (the live ones may fall). */
static uint64_t less(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

void report_site_subtract(struct report_site *to, const struct report_site *from)
{
    to->allocs = less(to->allocs, from->allocs);
    to->frees = less(to->frees, from->frees);
    to->bytes = less(to->bytes, from->bytes);
    to->live_bytes = less(to->live_bytes, from->live_bytes);
    to->never_written_bytes = less(to->never_written_bytes, from->never_written_bytes);
    to->queue_allocs = less(to->queue_allocs, from->queue_allocs);
    to->temporary = less(to->temporary, from->temporary);
    to->inherited_blocks = less(to->inherited_blocks, from->inherited_blocks);
    to->inherited_bytes = less(to->inherited_bytes, from->inherited_bytes);
    to->inherited_freed = less(to->inherited_freed, from->inherited_freed);
    to->inherited_freed_bytes = less(to->inherited_freed_bytes, from->inherited_freed_bytes);
    to->allocs_estimate -= from->allocs_estimate;
    to->bytes_estimate -= from->bytes_estimate;
    /* The ranges are the later's, moved by the earlier's estimate (no interval of their own). */
    struct report_estimate *e = &to->est;
    const struct report_estimate *f = &from->est;
    e->allocs -= f->allocs;
    e->allocs_low -= f->allocs;
    e->allocs_high -= f->allocs;
    e->bytes -= f->bytes;
    e->bytes_low -= f->bytes;
    e->bytes_high -= f->bytes;
    e->frees -= f->frees;
    e->live_bytes -= f->live_bytes;
    e->live_low -= f->live_bytes;
    e->live_high -= f->live_bytes;
    e->live_blocks -= f->live_blocks;
    e->temporary -= f->temporary;
}

void report_totals_subtract(struct report_totals *t, const struct report_totals *e)
{
    t->allocs = less(t->allocs, e->allocs);
    t->frees = less(t->frees, e->frees);
    t->reallocs = less(t->reallocs, e->reallocs);
    t->reallocs_in_place = less(t->reallocs_in_place, e->reallocs_in_place);
    t->reallocs_moved = less(t->reallocs_moved, e->reallocs_moved);
    t->aligned_allocs = less(t->aligned_allocs, e->aligned_allocs);
    t->failed_allocs = less(t->failed_allocs, e->failed_allocs);
    t->bytes_requested = less(t->bytes_requested, e->bytes_requested);
    t->bytes_usable = less(t->bytes_usable, e->bytes_usable);
    t->temporary = less(t->temporary, e->temporary);
    for (int i = 0; i < CALL_COUNT; i++)
        t->calls[i] = less(t->calls[i], e->calls[i]);
}

/* Its counters, floored at 0; the rest (exact, the peak's bound, what was not seen or dropped
 * as a state: modules, libraries, allocators) left as they are. */
void report_precision_subtract(struct report_precision *p, const struct report_precision *e)
{
    p->blocks_untracked = less(p->blocks_untracked, e->blocks_untracked);
    p->sites_dropped = less(p->sites_dropped, e->sites_dropped);
    p->stacks_truncated = less(p->stacks_truncated, e->stacks_truncated);
    p->usable_sizes_dropped = less(p->usable_sizes_dropped, e->usable_sizes_dropped);
    p->never_written_unattributed =
        less(p->never_written_unattributed, e->never_written_unattributed);
}

/* The count of e's bucket from..to (0 when it has none). */
static uint64_t bucket_of(const struct report *e, uint64_t from, uint64_t to)
{
    for (size_t i = 0; i < e->requested_count; i++)
        if (e->requested_sizes[i].from == from && e->requested_sizes[i].to == to)
            return e->requested_sizes[i].count;
    return 0;
}

static uint64_t count_of(const struct report *e, uint64_t key)
{
    for (size_t i = 0; i < e->usable_count; i++)
        if (e->usable_sizes[i].key == key)
            return e->usable_sizes[i].count;
    return 0;
}

void report_sizes_subtract(struct report *r, const struct report *e)
{
    size_t kept = 0;
    for (size_t i = 0; i < r->requested_count; i++) {
        struct report_bucket b = r->requested_sizes[i];
        b.count = less(b.count, bucket_of(e, b.from, b.to));
        if (b.count > 0)
            r->requested_sizes[kept++] = b;
    }
    r->requested_count = kept;
    kept = 0;
    for (size_t i = 0; i < r->usable_count; i++) {
        struct report_count c = r->usable_sizes[i];
        c.count = less(c.count, count_of(e, c.key));
        if (c.count > 0)
            r->usable_sizes[kept++] = c;
    }
    r->usable_count = kept;
}

void report_coverage(const struct report *r, double *allocs, double *bytes)
{
    *allocs = *bytes = 0;
    for (size_t i = 0; i < r->site_count; i++) {
        *allocs += r->sites[i].est.allocs;
        *bytes += r->sites[i].est.bytes;
    }
}

const struct report_peak *report_peak_at(const struct report_queues *q, uint64_t depth)
{
    for (size_t i = 0; i < q->by_peak_depth_count; i++)
        if (q->by_peak_depth[i].peak_depth == depth)
            return &q->by_peak_depth[i];
    return NULL;
}

double report_per_connection(const struct report_peak *p, uint64_t value)
{
    return p->connections ? (double)value / (double)p->connections : 0.0;
}

bool report_queue_audit(const struct report *r)
{
    const struct report_queues *q = &r->queues;
    if (q->pushes || q->pops || q->opened || q->grows || q->by_hooks || q->by_stack_patterns ||
        q->refused_events || q->events_without_connection || q->depth_histogram_count ||
        q->by_peak_depth_count || r->violation_count)
        return true;
    for (size_t i = 0; i < r->process_count; i++)
        if (r->processes[i].queue_sites)
            return true;
    return false;
}

void report_free(struct report *r)
{
    for (size_t i = 0; i < r->process_count; i++) {
        struct report_process *p = &r->processes[i];
        free(p->exe);
        free(p->argv);
        free(p->command);
        free(p->reason);
        free(p->source);
        free(p->stacks_mode);
        free(p->end_signal);
        free(p->run_id);
        free(p->pythonmalloc);
        free(p->fallback_dir);
        report_timeline_free(p);
    }
    for (size_t i = 0; i < r->module_count; i++) {
        free(r->modules[i].path);
        free(r->modules[i].build_id);
        free(r->modules[i].file);
    }
    for (size_t i = 0; i < r->site_count; i++) {
        report_stack_free(&r->sites[i].stack);
        free(r->sites[i].wrapper);
        free(r->sites[i].by_design);
    }
    free(r->inherited_sites);
    for (size_t i = 0; i < r->check_count; i++) {
        free(r->checks[i].name);
        free(r->checks[i].detail);
        free(r->checks[i].first_failure);
        free(r->checks[i].na_detail);
    }
    for (size_t i = 0; i < r->violation_count; i++)
        report_stack_free(&r->violations[i].stack);
    for (size_t i = 0; i < r->failure_count; i++)
        report_stack_free(&r->failures[i].stack);
    for (size_t i = 0; i < r->precision.deepbind_count; i++)
        free(r->precision.deepbind_libraries[i]);
    for (size_t i = 0; i < r->precision.uninterposed_count; i++)
        free(r->precision.uninterposed_allocators[i]);
    free(r->precision.uninterposed_allocators);
    for (size_t i = 0; i < r->precision.unreachable_count; i++)
        free(r->precision.unreachable_allocators[i]);
    free(r->precision.unreachable_allocators);
    for (size_t i = 0; i < r->precision.attach_unreached_count; i++)
        free(r->precision.attach_unreached[i]);
    free(r->precision.attach_unreached);
    for (size_t i = 0; i < r->skip_count; i++)
        free(r->skip[i]);
    free(r->skip);
    for (size_t i = 0; i < r->wrapper_count; i++)
        free(r->wrappers[i].name);
    free(r->wrappers);
    for (size_t i = 0; i < r->input_note_count; i++)
        free(r->input_notes[i]);
    free(r->input_notes);
    for (size_t i = 0; i < r->trust.note_count; i++)
        free(r->trust.notes[i]);
    free(r->trust.notes);
    free(r->processes);
    free(r->modules);
    free(r->requested_sizes);
    free(r->usable_sizes);
    free(r->sites);
    free(r->queues.depth_histogram);
    free(r->queues.allocs_by_depth);
    free(r->queues.by_peak_depth);
    free(r->checks);
    free(r->violations);
    free(r->failures);
    free(r->precision.deepbind_libraries);
    *r = (struct report){0};
}
