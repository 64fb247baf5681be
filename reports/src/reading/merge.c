/* Merging dumps: threads are already merged by the interposer, so this adds processes (forked
 * children, several hosts) and drops snapshots superseded by a later dump of the same process. */
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "reports_reading.h"

/* At most this many violation or failure stacks are kept across all dumps. */
#define EVENTS_KEPT 32

static bool same_module(const struct report_module *a, const struct report_module *b)
{
    if (a->build_id[0] || b->build_id[0])
        return strcmp(a->build_id, b->build_id) == 0 && strcmp(a->path, b->path) == 0;
    return strcmp(a->path, b->path) == 0;
}

uint32_t *report_modules_merged(struct report *into, const struct report *dump)
{
    uint32_t *map = calloc(dump->module_count + 1, sizeof *map);
    for (size_t i = 0; map && i < dump->module_count; i++) {
        const struct report_module *m = &dump->modules[i];
        size_t j = 0;
        while (j < into->module_count && !same_module(&into->modules[j], m))
            j++;
        if (j == into->module_count) {
            struct report_module *added = array_push(&into->modules, &into->module_count,
                                                     &into->module_capacity, sizeof *added);
            if (added == NULL)
                break;
            added->path = report_copy_string(m->path);
            added->build_id = report_copy_string(m->build_id);
            added->is_main = dump->process_count && strcmp(m->path, dump->processes[0].exe) == 0;
        }
        map[i] = (uint32_t)j;
    }
    return map;
}

bool report_same_stack(const struct report_stack *a, const struct report_stack *b)
{
    if (a->frame_count != b->frame_count)
        return false;
    for (size_t i = 0; i < a->frame_count; i++)
        if (a->frames[i].module != b->frames[i].module ||
            a->frames[i].offset != b->frames[i].offset)
            return false;
    return true;
}

uint64_t report_stack_hash(const struct report_stack *s)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < s->frame_count; i++) {
        h = (h ^ s->frames[i].offset) * 1099511628211ull;
        h = (h ^ s->frames[i].module) * 1099511628211ull;
    }
    return h;
}

size_t *report_site_index(const struct report *r, size_t sites, size_t *slots)
{
    *slots = 16;
    while (*slots < 2 * sites)
        *slots *= 2;
    size_t *index = malloc(*slots * sizeof *index);
    if (index == NULL)
        return NULL;
    memset(index, 0xff, *slots * sizeof *index);
    for (size_t i = 0; i < r->site_count; i++) {
        size_t s = report_stack_hash(&r->sites[i].stack) & (*slots - 1);
        while (index[s] != SIZE_MAX)
            s = (s + 1) & (*slots - 1);
        index[s] = i;
    }
    return index;
}

size_t *report_site_slot(size_t *index, size_t slots, const struct report *r,
                         const struct report_stack *stack)
{
    size_t s = report_stack_hash(stack) & (slots - 1);
    while (index[s] != SIZE_MAX && !report_same_stack(&r->sites[index[s]].stack, stack))
        s = (s + 1) & (slots - 1);
    return &index[s];
}

/* Sites are merged through an open-addressing index over into->sites, rebuilt per dump: merging
 * tens of thousands of sites stays linear. */
static void merge_sites(struct report *into, const struct report *dump, const uint32_t *map)
{
    /* One more than needed: sites is never NULL once merged, even with none (fold.c copies). */
    if (!array_reserve(&into->sites, &into->site_capacity, into->site_count + dump->site_count + 1,
                       sizeof *into->sites))
        return;
    size_t slots;
    size_t *index = report_site_index(into, into->site_count + dump->site_count, &slots);
    if (index == NULL)
        return;
    uint64_t program = dump->process_count > 0 ? report_program_id(dump->processes[0].exe) : 0;
    for (size_t i = 0; i < dump->site_count; i++) {
        const struct report_site *from = &dump->sites[i];
        struct report_stack stack = report_stack_copy(&from->stack, map);
        size_t *slot = report_site_slot(index, slots, into, &stack);
        struct report_site *to;
        if (*slot == SIZE_MAX) {
            *slot = into->site_count;
            to = &into->sites[into->site_count++];
            *to = (struct report_site){.stack = stack, .program = program};
        } else {
            to = &into->sites[*slot];
            to->program = report_programs_joined(to->program, program);
            report_stack_free(&stack);
        }
        report_site_add(to, from);
        to->id = 0; /* ids are per dump */
    }
    free(index);
}

/* Adds counts keyed by key into a list kept sorted by key. */
static void merge_counts(struct report_count **into, size_t *count, size_t *capacity,
                         const struct report_count *from, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < *count && (*into)[j].key < from[i].key)
            j++;
        if (j < *count && (*into)[j].key == from[i].key) {
            (*into)[j].count += from[i].count;
            continue;
        }
        if (array_push(into, count, capacity, sizeof **into) == NULL)
            return;
        memmove(&(*into)[j + 1], &(*into)[j], (*count - 1 - j) * sizeof **into);
        (*into)[j] = from[i];
    }
}

static void merge_buckets(struct report *into, const struct report *dump)
{
    for (size_t i = 0; i < dump->requested_count; i++) {
        const struct report_bucket *b = &dump->requested_sizes[i];
        size_t j = 0;
        while (j < into->requested_count && into->requested_sizes[j].from < b->from)
            j++;
        if (j < into->requested_count && into->requested_sizes[j].from == b->from) {
            into->requested_sizes[j].count += b->count;
            continue;
        }
        if (array_push(&into->requested_sizes, &into->requested_count, &into->requested_capacity,
                       sizeof *b) == NULL)
            return;
        memmove(&into->requested_sizes[j + 1], &into->requested_sizes[j],
                (into->requested_count - 1 - j) * sizeof *b);
        into->requested_sizes[j] = *b;
    }
    merge_counts(&into->usable_sizes, &into->usable_count, &into->usable_capacity,
                 dump->usable_sizes, dump->usable_count);
}

static void merge_totals(struct report_totals *t, const struct report_totals *d)
{
    t->allocs += d->allocs;
    t->frees += d->frees;
    t->reallocs += d->reallocs;
    t->reallocs_in_place += d->reallocs_in_place;
    t->reallocs_moved += d->reallocs_moved;
    t->aligned_allocs += d->aligned_allocs;
    t->failed_allocs += d->failed_allocs;
    t->bytes_requested += d->bytes_requested;
    t->bytes_usable += d->bytes_usable;
    t->live_bytes += d->live_bytes;
    t->live_blocks += d->live_blocks;
    t->peak_live_bytes += d->peak_live_bytes;
    t->threads += d->threads;
    t->temporary += d->temporary;
    for (int c = 0; c < CALL_COUNT; c++)
        t->calls[c] += d->calls[c];
    struct report_inherited *in = &t->inherited;
    const struct report_inherited *from = &d->inherited;
    in->processes += from->processes;
    in->blocks += from->blocks;
    in->bytes += from->bytes;
    in->freed_blocks += from->freed_blocks;
    in->freed_bytes += from->freed_bytes;
    in->reallocated += from->reallocated;
    in->unattributed_blocks += from->unattributed_blocks;
    in->unattributed_bytes += from->unattributed_bytes;
}

static void merge_queues(struct report_queues *q, const struct report_queues *d)
{
    q->pushes += d->pushes;
    q->pops += d->pops;
    q->discarded += d->discarded;
    q->moved += d->moved;
    q->queued_now += d->queued_now;
    q->grows += d->grows;
    q->shrinks += d->shrinks;
    q->returns_to_inline += d->returns_to_inline;
    merge_counts(&q->depth_histogram, &q->depth_histogram_count, &q->depth_histogram_capacity,
                 d->depth_histogram, d->depth_histogram_count);
    merge_counts(&q->allocs_by_depth, &q->allocs_by_depth_count, &q->allocs_by_depth_capacity,
                 d->allocs_by_depth, d->allocs_by_depth_count);
    for (size_t i = 0; i < d->by_peak_depth_count; i++) {
        const struct report_peak *p = &d->by_peak_depth[i];
        size_t j = 0;
        while (j < q->by_peak_depth_count && q->by_peak_depth[j].peak_depth != p->peak_depth)
            j++;
        if (j == q->by_peak_depth_count &&
            array_push(&q->by_peak_depth, &q->by_peak_depth_count, &q->by_peak_depth_capacity,
                       sizeof *p) == NULL)
            return;
        struct report_peak *to = &q->by_peak_depth[j];
        to->peak_depth = p->peak_depth;
        to->connections += p->connections;
        to->allocs += p->allocs;
        to->bytes += p->bytes;
    }
    q->opened += d->opened;
    q->closed += d->closed;
    q->by_hooks += d->by_hooks;
    q->by_stack_patterns += d->by_stack_patterns;
    q->by_both += d->by_both;
    q->events_without_connection += d->events_without_connection;
    q->refused_events += d->refused_events;
    q->records_dropped += d->records_dropped;
}

static void merge_events(struct report_event **into, size_t *count, size_t *capacity,
                         const struct report_event *from, size_t n, const uint32_t *map)
{
    for (size_t i = 0; i < n && *count < EVENTS_KEPT; i++) {
        struct report_event *e = array_push(into, count, capacity, sizeof *e);
        if (e == NULL)
            return;
        *e = from[i];
        e->stack = report_stack_copy(&from[i].stack, map);
    }
}

/* Adds the names not yet in the list. */
static void merge_names(char ***list, size_t *count, size_t *capacity, char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (size_t j = 0; j < *count && !known; j++)
            known = strcmp((*list)[j], names[i]) == 0;
        char **slot = known ? NULL : array_push(list, count, capacity, sizeof *slot);
        if (slot)
            *slot = report_copy_string(names[i]);
    }
}

static void merge_precision(struct report_precision *p, const struct report_precision *d,
                            bool first)
{
    p->exact = first ? d->exact : p->exact && d->exact;
    p->peak_live_bytes_within += d->peak_live_bytes_within;
    p->blocks_untracked += d->blocks_untracked;
    p->sites_dropped += d->sites_dropped;
    p->stacks_truncated += d->stacks_truncated;
    p->usable_sizes_dropped += d->usable_sizes_dropped;
    p->modules_dropped += d->modules_dropped;
    p->never_written_unattributed += d->never_written_unattributed;
    p->unexplained_anonymous += d->unexplained_anonymous;
    p->unexplained_bytes += d->unexplained_bytes;
    p->modules_unknown += d->modules_unknown;
    merge_names(&p->deepbind_libraries, &p->deepbind_count, &p->deepbind_capacity,
                d->deepbind_libraries, d->deepbind_count);
    merge_names(&p->uninterposed_allocators, &p->uninterposed_count, &p->uninterposed_capacity,
                d->uninterposed_allocators, d->uninterposed_count);
    merge_names(&p->unreachable_allocators, &p->unreachable_count, &p->unreachable_capacity,
                d->unreachable_allocators, d->unreachable_count);
    merge_names(&p->attach_unreached, &p->attach_unreached_count, &p->attach_unreached_capacity,
                d->attach_unreached, d->attach_unreached_count);
}

void report_merge_one(struct report *into, const struct report *dump)
{
    bool first = into->process_count == 0;
    for (size_t i = 0; i < dump->process_count; i++) {
        struct report_process *p =
            array_push(&into->processes, &into->process_count, &into->process_capacity, sizeof *p);
        if (p == NULL)
            return;
        const struct report_process *d = &dump->processes[i];
        *p = *d;
        p->inherited = dump->totals.inherited; /* resolved by now: its own, kept apart */
        p->exe = report_copy_string(d->exe);
        p->argv = report_copy_string(d->argv);
        p->command = report_copy_string(d->command);
        p->reason = report_copy_string(d->reason);
        p->source = report_copy_string(d->source);
        p->stacks_mode = report_copy_string(d->stacks_mode);
        p->end_signal = report_copy_string(d->end_signal);
        p->run_id = report_copy_string(d->run_id);
        p->pythonmalloc = report_copy_string(d->pythonmalloc);
        p->fallback_dir = report_copy_string(d->fallback_dir);
        report_timeline_copy(p, d);
    }
    into->has_sequences = first ? dump->has_sequences : into->has_sequences && dump->has_sequences;
    into->temporary_missing = into->temporary_missing || dump->temporary_missing;
    into->sampled_large_sites += dump->sampled_large_sites;
    into->mean_size_estimates += dump->mean_size_estimates;
    into->totals.has_temporary = !into->temporary_missing;
    uint32_t *map = report_modules_merged(into, dump);
    if (map == NULL)
        return;
    merge_totals(&into->totals, &dump->totals);
    merge_buckets(into, dump);
    merge_sites(into, dump, map);
    merge_queues(&into->queues, &dump->queues);
    report_checks_merge(into, dump);
    merge_events(&into->violations, &into->violation_count, &into->violation_capacity,
                 dump->violations, dump->violation_count, map);
    into->failure_candidates += dump->failure_candidates;
    into->failures_injected += dump->failures_injected;
    merge_events(&into->failures, &into->failure_count, &into->failure_capacity, dump->failures,
                 dump->failure_count, map);
    merge_precision(&into->precision, &dump->precision, first);
    free(map);
}

bool report_same_image(const struct report *a, const struct report *b)
{
    const struct report_process *pa = &a->processes[0], *pb = &b->processes[0];
    return pa->pid == pb->pid && pa->start_time_ns == pb->start_time_ns &&
           strcmp(pa->exe, pb->exe) == 0;
}

int report_dump_order(const struct report *a, const struct report *b)
{
    const struct report_process *pa = &a->processes[0], *pb = &b->processes[0];
    if (pa->has_sequence && pb->has_sequence)
        return pa->sequence < pb->sequence ? -1 : pa->sequence > pb->sequence;
    return pa->dump_time_ns < pb->dump_time_ns ? -1 : pa->dump_time_ns > pb->dump_time_ns;
}

/* What to do with dump i of the n given: merge it, leave it out as superseded by a later dump of
 * its image, or as a duplicate (a dump given twice, or a copy) of one given before it. */
enum fate { MERGE, SUPERSEDED, DUPLICATE };

static enum fate fate_of(struct report *dumps, size_t n, size_t i, size_t *original)
{
    for (size_t j = 0; j < n; j++)
        if (j != i && report_same_image(&dumps[j], &dumps[i]) &&
            report_dump_order(&dumps[j], &dumps[i]) > 0)
            return SUPERSEDED;
    for (size_t j = 0; j < i; j++)
        if (report_same_image(&dumps[j], &dumps[i]) &&
            report_dump_order(&dumps[j], &dumps[i]) == 0) {
            *original = j;
            return DUPLICATE;
        }
    return MERGE;
}

static void note_duplicate(struct report *report, const struct report *copy,
                           const struct report *original)
{
    const struct report_process *p = &copy->processes[0];
    report->duplicates++;
    if (p->has_sequence)
        report_push_string(&report->input_notes, &report->input_note_count,
                           &report->input_note_capacity,
                           "%s is the same dump as %s (pid %llu, start time %llu, sequence %llu): "
                           "counted once.",
                           p->source, original->processes[0].source, (unsigned long long)p->pid,
                           (unsigned long long)p->start_time_ns, (unsigned long long)p->sequence);
    else
        report_push_string(
            &report->input_notes, &report->input_note_count, &report->input_note_capacity,
            "%s is the same dump as %s (pid %llu, start time %llu, written at %llu): "
            "counted once.",
            p->source, original->processes[0].source, (unsigned long long)p->pid,
            (unsigned long long)p->start_time_ns, (unsigned long long)p->dump_time_ns);
}

enum report_status report_load(const char *const *paths, size_t count, struct report *report,
                               char *error, size_t error_size)
{
    struct report *dumps = calloc(count + 1, sizeof *dumps);
    enum report_status status = dumps ? REPORT_OK : REPORT_INPUT_ERROR;
    if (dumps == NULL)
        snprintf(error, error_size, "out of memory");
    for (size_t i = 0; i < count && status == REPORT_OK; i++)
        status = report_dump_read(paths[i], &dumps[i], error, error_size);
    if (status == REPORT_OK)
        report_inherited_resolve(dumps, count);
    for (size_t i = 0; i < count && status == REPORT_OK; i++) {
        size_t original = 0;
        switch (fate_of(dumps, count, i, &original)) {
        case SUPERSEDED:
            report->superseded++;
            break;
        case DUPLICATE:
            note_duplicate(report, &dumps[i], &dumps[original]);
            break;
        case MERGE:
            report_merge_one(report, &dumps[i]);
            break;
        }
    }
    /* A snapshot left out of the counts still adds its points and its moment to the timeline. */
    for (size_t i = 0; i < count && status == REPORT_OK; i++)
        if (dumps[i].process_count > 0 && fate_of(dumps, count, i, &(size_t){0}) != MERGE)
            report_timeline_absorb(report, &dumps[i].processes[0]);
    for (size_t i = 0; dumps && i < count; i++)
        report_free(&dumps[i]);
    free(dumps);
    if (status == REPORT_OK)
        report_run_files_note(report, paths, count);
    if (status == REPORT_OK)
        report_assess(report);
    return status;
}
