/* A delta between two dumps of one process image: what it did between them, as Go's
 * net/http/pprof serves a heap or allocs profile with ?seconds=S (the first profile scaled by -1
 * and merged into the second, samples left at zero dropped; its TimeNanos and DurationNanos the
 * window's). Here the later dump's sites take out the earlier's, stacks matched frame by frame
 * before symbolization (so that two dumps fold alike), then the result is made ready as a report
 * is; sites left at zero are dropped after the fold. qaudit serve asks for it
 * (serve/src/delta_profile.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports_reading.h"

/* earlier's sites taken out of r's (r holds the later dump alone); false when memory ran out.
 * A site of earlier that r lacks (its table dropped it) is counted in *unmatched. */
static bool subtract_sites(struct report *r, const struct report *earlier, size_t *unmatched)
{
    size_t slots;
    size_t *index = report_site_index(r, r->site_count, &slots);
    uint32_t *map = report_modules_merged(r, earlier);
    bool ok = index != NULL && map != NULL;
    for (size_t i = 0; ok && i < earlier->site_count; i++) {
        struct report_stack stack = report_stack_copy(&earlier->sites[i].stack, map);
        size_t *slot = report_site_slot(index, slots, r, &stack);
        if (*slot != SIZE_MAX)
            report_site_subtract(&r->sites[*slot], &earlier->sites[i]);
        else
            (*unmatched)++;
        report_stack_free(&stack);
    }
    free(index);
    free(map);
    return ok;
}

/* What a profile of the site would show: every figure rounds to 0 (pprof's values are whole). */
static bool unchanged(const struct report_site *s)
{
    return llround(s->est.allocs) == 0 && llround(s->est.bytes) == 0 &&
           llround(s->est.live_blocks) == 0 && llround(s->est.live_bytes) == 0;
}

static void drop_unchanged(struct report *r)
{
    size_t kept = 0;
    for (size_t i = 0; i < r->site_count; i++) {
        struct report_site *s = &r->sites[i];
        if (!unchanged(s)) {
            r->sites[kept++] = *s;
            continue;
        }
        report_stack_free(&s->stack);
        free(s->wrapper);
        free(s->by_design);
    }
    r->site_count = kept;
}

/* Both dumps read, of one image and in that order: true, or false with error set. */
static bool read_pair(const char *earlier, const char *later, struct report *a, struct report *b,
                      char *error, size_t size)
{
    if (report_dump_read(earlier, a, error, size) != REPORT_OK ||
        report_dump_read(later, b, error, size) != REPORT_OK)
        return false;
    if (a->process_count != 1 || b->process_count != 1 || !report_same_image(a, b)) {
        snprintf(error, size, "%s and %s are not dumps of one process image", earlier, later);
        return false;
    }
    if (report_dump_order(a, b) >= 0) {
        snprintf(error, size, "%s was not written before %s", earlier, later);
        return false;
    }
    report_inherited_resolve(a, 1);
    report_inherited_resolve(b, 1);
    return true;
}

/* The window's figures wherever a report's texts quote them (its trust notes, the profile's
 * comments): the cumulative totals, the size histograms and the precision counters less the
 * earlier dump's, and the process's small allocations and calls counted again from them. */
static void window_figures(struct report *r, const struct report *earlier)
{
    report_totals_subtract(&r->totals, &earlier->totals);
    report_sizes_subtract(r, earlier);
    report_precision_subtract(&r->precision, &earlier->precision);
    struct report_process *p = &r->processes[0];
    p->small_allocs = report_small_allocs(r);
    p->alloc_calls = r->totals.allocs + r->totals.reallocs;
    r->delta_from_ns = earlier->processes[0].dump_time_ns;
}

/* r made ready, the sites that did not change dropped, then its trust assessed on what is left
 * (the notes count the window's sites). */
static bool finish(struct report *r, const struct report_load_settings *s, size_t unmatched,
                   char *error, size_t size)
{
    if (!report_make_ready(r, s, error, size))
        return false;
    drop_unchanged(r);
    report_estimate_recount(r);
    report_assess(r);
    if (unmatched > 0)
        report_push_string(&r->trust.notes, &r->trust.note_count, &r->trust.note_capacity,
                           "%zu sites of the earlier dump are not in the later one (its site "
                           "table dropped them): left out of the delta.",
                           unmatched);
    return true;
}

bool report_load_delta(const char *earlier, const char *later, const struct report_load_settings *s,
                       struct report *r, char *error, size_t size)
{
    struct report a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    size_t unmatched = 0;
    bool ok = read_pair(earlier, later, &a, &b, error, size);
    if (ok) {
        report_merge_one(r, &b);
        ok = subtract_sites(r, &a, &unmatched);
        if (!ok)
            snprintf(error, size, "out of memory taking %s out of %s", earlier, later);
    }
    if (ok) {
        window_figures(r, &a);
        ok = finish(r, s, unmatched, error, size);
    }
    report_free(&a);
    report_free(&b);
    return ok;
}
