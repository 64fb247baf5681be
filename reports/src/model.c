/* The report model's small pieces: growing arrays, stacks, freeing, and the questions every
 * renderer asks of the queue figures. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *const report_call_names[CALL_COUNT] = {
    "malloc",        "calloc",   "realloc", "reallocarray", "posix_memalign",
    "aligned_alloc", "memalign", "valloc",  "pvalloc",      "free"};

void *push_item(void *items, size_t *count, size_t size)
{
    void **array = items;
    char *grown = realloc(*array, (*count + 1) * size);
    if (grown == NULL)
        return NULL;
    *array = grown;
    memset(grown + *count * size, 0, size);
    return grown + (*count)++ * size;
}

char *copy_string(const char *s)
{
    return s ? strdup(s) : NULL;
}

void locations_free(struct report_location *locations, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(locations[i].function);
        free(locations[i].file);
    }
    free(locations);
}

void stack_free(struct report_stack *stack)
{
    for (size_t i = 0; i < stack->frame_count; i++)
        locations_free(stack->frames[i].locations, stack->frames[i].location_count);
    free(stack->frames);
    *stack = (struct report_stack){0};
}

struct report_stack stack_copy(const struct report_stack *stack, const uint32_t *module_map)
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

bool report_check_passed(const struct report_check *c)
{
    return c->failed == 0;
}

bool report_passed(const struct report *r)
{
    for (size_t i = 0; i < r->check_count; i++)
        if (!report_check_passed(&r->checks[i]))
            return false;
    return true;
}

void report_free(struct report *r)
{
    for (size_t i = 0; i < r->process_count; i++) {
        struct report_process *p = &r->processes[i];
        free(p->exe);
        free(p->argv);
        free(p->reason);
        free(p->source);
        free(p->stacks_mode);
    }
    for (size_t i = 0; i < r->module_count; i++) {
        free(r->modules[i].path);
        free(r->modules[i].build_id);
        free(r->modules[i].file);
    }
    for (size_t i = 0; i < r->site_count; i++)
        stack_free(&r->sites[i].stack);
    for (size_t i = 0; i < r->check_count; i++) {
        free(r->checks[i].name);
        free(r->checks[i].detail);
        free(r->checks[i].first_failure);
    }
    for (size_t i = 0; i < r->violation_count; i++)
        stack_free(&r->violations[i].stack);
    for (size_t i = 0; i < r->failure_count; i++)
        stack_free(&r->failures[i].stack);
    for (size_t i = 0; i < r->precision.deepbind_count; i++)
        free(r->precision.deepbind_libraries[i]);
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
