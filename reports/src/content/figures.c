/* Figures every rendering derives the same way: sites ranked by one of their (estimated) figures,
 * whether the live bytes are at exit or at a snapshot, and how shallow the stacks are. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports_content.h"

double report_site_figure(const struct report_site *s, enum site_rank key)
{
    switch (key) {
    case RANK_ALLOCS:
        return s->est.allocs;
    case RANK_BYTES:
        return s->est.bytes;
    case RANK_PEAK:
        return s->est.peak_live_bytes;
    case RANK_LIVE:
        return s->est.live_bytes;
    case RANK_TEMPORARY:
        return s->est.temporary;
    default:
        return (double)s->never_written_bytes;
    }
}

struct rank_context {
    const struct report_site *base;
    enum site_rank key;
};

/* Highest first; ties keep the sites' order. */
static int by_figure(const void *a, const void *b, void *context)
{
    const struct rank_context *c = context;
    const struct report_site *x = *(const struct report_site *const *)a;
    const struct report_site *y = *(const struct report_site *const *)b;
    double fx = report_site_figure(x, c->key), fy = report_site_figure(y, c->key);
    if (fx != fy)
        return fx > fy ? -1 : 1;
    return x < y ? -1 : x > y;
}

size_t report_rank_sites(const struct report *r, enum site_rank key, const struct report_site **out)
{
    size_t n = 0;
    for (size_t i = 0; i < r->site_count; i++)
        if (report_site_figure(&r->sites[i], key) > 0)
            out[n++] = &r->sites[i];
    struct rank_context context = {r->sites, key};
    qsort_r(out, n, sizeof *out, by_figure, &context);
    return n;
}

enum live_scope report_live_scope(const struct report *r)
{
    size_t finals = 0;
    for (size_t i = 0; i < r->process_count; i++)
        finals += r->processes[i].final;
    if (finals == r->process_count)
        return LIVE_AT_EXIT;
    if (finals != 0)
        return LIVE_MIXED;
    for (size_t i = 0; i < r->process_count; i++)
        if (strcmp(r->processes[i].reason, "detach") != 0)
            return LIVE_NOW;
    return LIVE_AT_DETACH;
}

const char *const report_live_scope_names[4] = {"exit", "now", "mixed", "now"};

const char *report_live_scope_phrase(enum live_scope scope)
{
    static const char *const phrases[] = {"at exit", "at the snapshot",
                                          "at exit or at the last snapshot", "at the detach"};
    return phrases[scope];
}

bool report_any_site_estimated(const struct report *r)
{
    for (size_t i = 0; i < r->site_count; i++)
        if (r->sites[i].estimated)
            return true;
    return false;
}

/* Stacks of one or two frames under a stack depth that allowed more: frame pointers missing
 * (--stacks fp on code built without them) or an unwinder that gave up. Weighted by allocations;
 * the share of them, or 0 when stacks are not shallow or there are no sites. */
double report_shallow_share(const struct report *r)
{
    double shallow = 0, all = 0;
    uint64_t depth = 0;
    for (size_t i = 0; i < r->process_count; i++)
        depth = r->processes[i].stack_depth > depth ? r->processes[i].stack_depth : depth;
    if (depth != 0 && depth <= 2)
        return 0;
    for (size_t i = 0; i < r->site_count; i++) {
        const struct report_site *s = &r->sites[i];
        all += s->est.allocs;
        if (s->stack.frame_count + s->folded <= 2)
            shallow += s->est.allocs;
    }
    return all > 0 && shallow / all > 0.5 ? shallow / all : 0;
}

/* The stacks mode of the dumps when they agree ("fp", "sampled:64b"), else "mixed". */
void report_stacks_mode(const struct report *r, char *out, size_t size)
{
    snprintf(out, size, "%s", r->process_count ? "" : "?");
    for (size_t i = 0; i < r->process_count; i++) {
        char mode[96];
        report_process_stacks(&r->processes[i], mode, sizeof mode);
        if (i > 0 && strcmp(out, mode) != 0) {
            snprintf(out, size, "mixed");
            return;
        }
        snprintf(out, size, "%s", mode);
    }
}

void report_process_stacks(const struct report_process *p, char *out, size_t size)
{
    if (p->sampling == SAMPLING_NONE || p->sample_every == 0)
        snprintf(out, size, "%s", p->stacks_mode);
    else
        snprintf(out, size, "sampled:%llu%s%s", (unsigned long long)p->sample_every,
                 p->sampling == SAMPLING_BYTES ? "b" : "", p->sampling_inferred ? "?" : "");
}

void report_coverage_of(const struct report *r, struct coverage *c)
{
    *c = (struct coverage){0};
    double samples = 0, sampled_allocs = 0, sampled_bytes = 0;
    for (size_t i = 0; i < r->site_count; i++) {
        const struct report_site *s = &r->sites[i];
        if (!s->estimated) {
            c->allocs += s->est.allocs;
            c->bytes += s->est.bytes;
            continue;
        }
        samples += (double)s->allocs;
        sampled_allocs += s->est.allocs;
        sampled_bytes += s->est.bytes;
    }
    double low = 1, high = 1;
    if (samples > 0) { /* the sampled part scales with its number of samples, a Poisson count */
        report_poisson_interval(samples, &low, &high);
        low /= samples;
        high /= samples;
        c->estimated = true;
    }
    c->allocs_low = c->allocs + low * sampled_allocs;
    c->allocs_high = c->allocs + high * sampled_allocs;
    c->bytes_low = c->bytes + low * sampled_bytes;
    c->bytes_high = c->bytes + high * sampled_bytes;
    c->allocs += sampled_allocs;
    c->bytes += sampled_bytes;
}

/* Stacks modes that give every allocation a site. */
static bool every_allocation_sited(const struct report *r)
{
    for (size_t i = 0; i < r->process_count; i++) {
        const char *mode = r->processes[i].stacks_mode;
        if (strcmp(mode, "always") != 0 && strcmp(mode, "fp") != 0)
            return false;
    }
    return r->process_count > 0;
}

void report_live_without_site(const struct report *r, struct unsited *u)
{
    *u = (struct unsited){0};
    u->every_site = every_allocation_sited(r);
    double blocks = 0, bytes = 0;
    for (size_t i = 0; i < r->site_count; i++) {
        blocks += r->sites[i].est.live_blocks;
        bytes += r->sites[i].est.live_bytes;
        u->estimated = u->estimated || r->sites[i].estimated;
    }
    /* Forked children's live blocks include what they still hold of their inheritance, whose
     * sites are the parents': not a block without a site. */
    const struct report_inherited *in = &r->totals.inherited;
    blocks +=
        (double)(in->blocks - (in->freed_blocks < in->blocks ? in->freed_blocks : in->blocks));
    bytes += (double)(in->bytes - (in->freed_bytes < in->bytes ? in->freed_bytes : in->bytes));
    u->sited_bytes = bytes;
    double left = (double)r->totals.live_blocks - blocks;
    u->blocks = left >= 0.5 ? left : 0;
    u->bytes = u->blocks > 0 && (double)r->totals.live_bytes > bytes
                   ? (double)r->totals.live_bytes - bytes
                   : 0;
}

double report_live_share_whole(const struct report *r)
{
    struct unsited u;
    report_live_without_site(r, &u);
    return u.blocks < 1 && u.sited_bytes > 0 ? u.sited_bytes : (double)r->totals.live_bytes;
}

double report_live_rounding_bytes(const struct report *r)
{
    struct unsited u;
    report_live_without_site(r, &u);
    const struct report_inherited *in = &r->totals.inherited;
    bool inherited = in->blocks > in->freed_blocks;
    if (!u.every_site || u.estimated || u.blocks >= 1 || inherited ||
        u.sited_bytes > (double)r->totals.live_bytes)
        return -1;
    return (double)r->totals.live_bytes - u.sited_bytes;
}

bool report_live_worth_listing(const struct report *r, const struct report_site *s)
{
    return s->est.live_blocks >= 99.5 ||
           (r->totals.live_bytes > 0 && s->est.live_bytes >= 0.01 * (double)r->totals.live_bytes);
}

void report_attribute_command(const struct report *r, char *out, size_t size)
{
    const struct report_process *p = r->process_count ? &r->processes[0] : NULL;
    if (p != NULL && p->attached_at_ns != 0) { /* counted from an attach: attach it so again */
        snprintf(out, size, "qaudit attach %" PRIu64 " --stacks always", p->pid);
        return;
    }
    snprintf(out, size, "qaudit run --stacks always -- %s",
             p == NULL                     ? "PROGRAM"
             : p->command && p->command[0] ? p->command
                                           : p->exe);
}
