/* The frame walk shared by the flame views (reports_content.h): which levels of a site's stack they
 * show, in which order, under which names, and what a site weighs. */
#include "reports_content.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

size_t report_stack_first_location(const struct report *r, const struct report_stack *s,
                                   size_t frame)
{
    if (frame != 0 || s->frame_count == 0)
        return 0;
    const struct report_frame *f = &s->frames[0];
    size_t first = 0;
    while (first + 1 < f->location_count && report_is_wrapper(r, f->locations[first].function))
        first++;
    return first;
}

const char *report_stack_level_name(const struct report *r, const struct report_frame *f,
                                    size_t location, char *out, size_t size)
{
    if (location < f->location_count) {
        const char *function = f->locations[location].function;
        snprintf(out, size, "%s", function ? function : "??");
    } else if (f->module != REPORT_NO_MODULE) {
        snprintf(out, size, "%s+0x%" PRIx64, report_path_base_name(r->modules[f->module].path),
                 f->offset);
    } else {
        snprintf(out, size, "0x%" PRIx64, f->offset);
    }
    return out;
}

void report_stack_walk_root_first(const struct report *r, const struct report_stack *s,
                                  stack_visit visit, void *context)
{
    for (size_t i = s->frame_count; i-- > 0;) {
        const struct report_frame *f = &s->frames[i];
        if (f->location_count == 0) {
            visit(context, f, 0);
            continue;
        }
        size_t first = report_stack_first_location(r, s, i);
        for (size_t l = f->location_count; l-- > first;)
            visit(context, f, l);
    }
}

double report_site_weight(const struct report_site *s, enum report_weight weight)
{
    static const enum site_rank ranks[] = {RANK_ALLOCS, RANK_BYTES, RANK_LIVE};
    return report_site_figure(s, ranks[weight]);
}

bool report_weight_parse(const char *name, enum report_weight *out)
{
    static const char *const names[] = {"allocs", "bytes", "live"};
    for (int w = 0; w < 3; w++)
        if (strcmp(name, names[w]) == 0) {
            *out = (enum report_weight)w;
            return true;
        }
    return false;
}
