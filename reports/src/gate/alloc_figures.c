/* The allocation gate's figures of a run: its sites summed by what matches them across builds
 * (their frames' functions, as qaudit diff matches), its totals, live blocks at exit, and the
 * queue audit's allocations per connection by peak depth and depth-one check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../content/reports_content.h"
#include "common/grow_array.h"
#include "reports_gate.h"

static int by_key(const void *a, const void *b)
{
    const struct alloc_site_figures *x = a, *y = b;
    return strcmp(x->key, y->key);
}

/* s's figures as a new entry of f (per: divides the flow figures). */
static bool add_site(const struct report *r, const struct report_site *s, double per,
                     struct alloc_figures *f)
{
    if (!array_reserve(&f->sites, &f->capacity, f->count + 1, sizeof *f->sites))
        return false;
    struct alloc_site_figures *e = &f->sites[f->count];
    memset(e, 0, sizeof *e);
    e->key = report_site_key(r, s);
    char where[1024];
    report_site_where(r, s, false, where, sizeof where);
    e->where = strdup(where);
    if (e->key == NULL || e->where == NULL) {
        free(e->key);
        free(e->where);
        return false;
    }
    f->count++;
    if (s->stack.frame_count > 0 && s->stack.frames[0].location_count > 0) {
        const struct report_location *l = &s->stack.frames[0].locations[0];
        e->file = l->file ? strdup(l->file) : NULL;
        e->line = l->line;
    }
    const struct report_estimate *est = &s->est;
    e->estimated = s->estimated;
    e->allocs = est->allocs / per;
    e->allocs_low = (s->estimated ? est->allocs_low : est->allocs) / per;
    e->allocs_high = (s->estimated ? est->allocs_high : est->allocs) / per;
    e->bytes = est->bytes / per;
    e->bytes_low = (s->estimated ? est->bytes_low : est->bytes) / per;
    e->bytes_high = (s->estimated ? est->bytes_high : est->bytes) / per;
    e->temporary = est->temporary / per;
    e->live_blocks = est->live_blocks;
    return true;
}

/* Sites of one key summed into the first of them. */
static void merge_same(struct alloc_figures *f)
{
    size_t kept = 0;
    for (size_t i = 0; i < f->count; i++) {
        struct alloc_site_figures *e = &f->sites[i];
        if (kept > 0 && strcmp(f->sites[kept - 1].key, e->key) == 0) {
            struct alloc_site_figures *k = &f->sites[kept - 1];
            k->allocs += e->allocs, k->allocs_low += e->allocs_low;
            k->allocs_high += e->allocs_high, k->bytes += e->bytes;
            k->bytes_low += e->bytes_low, k->bytes_high += e->bytes_high;
            k->temporary += e->temporary, k->live_blocks += e->live_blocks;
            k->estimated |= e->estimated;
            free(e->key), free(e->where), free(e->file);
        } else {
            f->sites[kept++] = *e;
        }
    }
    f->count = kept;
}

static void queue_figures(const struct report *r, struct alloc_figures *f)
{
    for (size_t d = 0; d < sizeof f->per_connection / sizeof f->per_connection[0]; d++)
        f->per_connection[d] = -1;
    f->queue_audit = report_queue_audit(r);
    const struct report_check *depth_one = report_check_named(r, "depth_one_no_alloc");
    f->depth_one = depth_one ? report_check_status(depth_one) : CHECK_NA;
    if (!f->queue_audit)
        return;
    for (size_t i = 0; i < r->queues.by_peak_depth_count; i++) {
        const struct report_peak *p = &r->queues.by_peak_depth[i];
        if (p->peak_depth < sizeof f->per_connection / sizeof f->per_connection[0] &&
            p->connections > 0)
            f->per_connection[p->peak_depth] = report_per_connection(p, p->allocs);
    }
}

bool report_gate_figures(const struct report *r, double per, struct alloc_figures *out)
{
    memset(out, 0, sizeof *out);
    double unit = per > 0 ? per : 1;
    out->has_sites = r->site_count > 0;
    out->sampled = false;
    out->at_exit = r->process_count > 0;
    for (size_t i = 0; i < r->process_count; i++) {
        out->sampled |= r->processes[i].sampling != SAMPLING_NONE;
        out->at_exit &= r->processes[i].final;
    }
    if (r->process_count > 0)
        program_name(r->processes[0].argv, r->processes[0].exe, out->program, sizeof out->program);
    out->has_temporary = r->totals.has_temporary;
    out->allocs = (double)r->totals.allocs / unit;
    out->bytes = (double)r->totals.bytes_requested / unit;
    out->temporary = (double)r->totals.temporary / unit;
    out->peak_live_bytes = (double)r->totals.peak_live_bytes;
    double within = (double)r->precision.peak_live_bytes_within;
    out->peak_live_bytes_low = fmax(0, out->peak_live_bytes - within);
    out->peak_live_bytes_high = out->peak_live_bytes + within;
    out->live_blocks = (double)r->totals.live_blocks;
    for (size_t i = 0; i < r->site_count; i++)
        if (!add_site(r, &r->sites[i], unit, out)) {
            report_gate_figures_free(out);
            return false;
        }
    if (out->count > 1)
        qsort(out->sites, out->count, sizeof *out->sites, by_key);
    merge_same(out);
    queue_figures(r, out);
    return true;
}

const struct alloc_site_figures *report_gate_site(const struct alloc_figures *f, const char *key)
{
    struct alloc_site_figures wanted = {.key = (char *)key};
    if (f->count == 0)
        return NULL;
    return bsearch(&wanted, f->sites, f->count, sizeof *f->sites, by_key);
}

void report_gate_figures_free(struct alloc_figures *f)
{
    for (size_t i = 0; i < f->count; i++)
        free(f->sites[i].key), free(f->sites[i].where), free(f->sites[i].file);
    free(f->sites);
    memset(f, 0, sizeof *f);
}
