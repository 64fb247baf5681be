/* The frame walk the flame views share (pprof, folded stacks): a site's stack as the text report
 * shows it (symbolized, inlined calls expanded, wrappers already folded by report_fold), with a
 * wrapper inlined into its caller at the leaf folded too, and each level's name. */
#ifndef REPORTS_FLAME_STACKS_H
#define REPORTS_FLAME_STACKS_H

#include <stddef.h>

#include "reports/render.h"
#include "reports/report.h"

/* The first location of frame (an index into s) that the views keep: in the leaf frame, the
 * leading locations of wrapper functions inlined into their caller are left out (at least one
 * stays), as report_fold leaves out whole wrapper frames; 0 in every other frame. */
size_t report_stack_first_location(const struct report *r, const struct report_stack *s,
                                   size_t frame);

/* The name of one level: the location's function ("??" when unknown); for a frame without
 * locations (not symbolized), "module+0xoffset", or "0xaddress" outside every module. */
const char *report_stack_level_name(const struct report *r, const struct report_frame *f,
                                    size_t location, char *out, size_t size);

/* Calls visit for every level of s from the root to the leaf, the order of folded stacks and
 * flame graphs: frames outermost first, and in a frame the function before the ones inlined into
 * it. location is the index into f->locations, 0 for a frame without locations. */
typedef void (*stack_visit)(void *context, const struct report_frame *f, size_t location);
void report_stack_walk_root_first(const struct report *r, const struct report_stack *s,
                                  stack_visit visit, void *context);

/* A site's weight (its estimate when sampled) for a view. */
double report_site_weight(const struct report_site *s, enum report_weight weight);

#endif
