/* The report's sites: how much of the heap they cover, the top sites by allocations, bytes and
 * peak, what is still live at exit (or at a snapshot), and the temporary allocations. A sampled
 * site's figures are estimates: shown with '~', their samples and a 99 % range. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "content.h"

/* 1234.4 -> "1,234", or "~1,234" for an estimate. */
static const char *fig_count(char *buf, double v, bool estimated)
{
    char n[CELL - 2];
    fmt_count(n, sizeof n, (unsigned long long)(v + 0.5));
    snprintf(buf, CELL, "%s%s", estimated ? "~" : "", n);
    return buf;
}

static const char *fig_bytes(char *buf, double v, bool estimated)
{
    char n[CELL - 2];
    fmt_bytes(n, sizeof n, (unsigned long long)(v + 0.5));
    snprintf(buf, CELL, "%s%s", estimated ? "~" : "", n);
    return buf;
}

static const char *count_range(char *buf, double low, double high)
{
    char a[CELL - 1], b[CELL - 1];
    fmt_count(a, sizeof a, (unsigned long long)(low + 0.5));
    fmt_count(b, sizeof b, (unsigned long long)(high + 0.5));
    snprintf(buf, 2 * CELL, "%s-%s", a, b);
    return buf;
}

static const char *bytes_range(char *buf, double low, double high)
{
    char a[CELL - 1], b[CELL - 1];
    fmt_bytes(a, sizeof a, (unsigned long long)(low + 0.5));
    fmt_bytes(b, sizeof b, (unsigned long long)(high + 0.5));
    snprintf(buf, 2 * CELL, "%s-%s", a, b);
    return buf;
}

static double share(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

void site_where(const struct report *r, const struct report_site *s, char *out, size_t size)
{
    const struct report_stack *stack = &s->stack;
    for (size_t i = 0; i < stack->frame_count; i++) {
        const struct report_frame *f = &stack->frames[i];
        if (runtime_frame(r, f))
            continue;
        size_t first = 0; /* a wrapper inlined into its caller: name the caller */
        while (first + 1 < f->location_count && report_is_wrapper(r, f->locations[first].function))
            first++;
        if (first + 1 == f->location_count && report_is_wrapper(r, f->locations[first].function) &&
            i + 1 < stack->frame_count)
            continue; /* a wrapper frame the fold kept (shallow stacks): look further */
        report_frame_describe_from(r, f, first, out, size);
        return;
    }
    if (stack->frame_count == 0)
        snprintf(out, size, "(no stack)");
    else
        report_frame_describe(r, &stack->frames[0], out, size);
}

static bool any_estimated(const struct report_site *const *sites, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (sites[i]->estimated)
            return true;
    return false;
}

/* "Coverage": the share of allocations and bytes the sites account for, and what limited it. */
static void coverage_line(struct document *d, const struct report *r)
{
    double allocs, bytes;
    report_coverage(r, &allocs, &bytes);
    double calls = (double)(r->totals.allocs + r->totals.reallocs);
    double requested = (double)r->totals.bytes_requested;
    if (calls <= 0)
        return;
    char mode[128], a[CELL], b[CELL], c[CELL], e[CELL];
    stacks_mode(r, mode, sizeof mode);
    bool estimated = any_site_estimated(r);
    if (!estimated && allocs >= calls && bytes >= requested) {
        doc_paragraph(d, "Coverage: the sites account for every allocation and every byte "
                         "requested.");
        return;
    }
    const char *why = "";
    if (strcmp(mode, "queue") == 0)
        why = " With stacks 'queue' only allocations inside queue operations (or matching "
              "--sites) get a stack: run with --stacks always, or sampled:N (by count) or "
              "sampled:Nb (by bytes), to see the whole heap.";
    else if (strcmp(mode, "off") == 0)
        why = " Stacks were off: run with --stacks always or sampled:N to see where "
              "allocations come from.";
    doc_paragraph(d,
                  "Coverage: the sites account for %s%.1f %% of the allocations (%s of %s) and "
                  "%s%.1f %% of the bytes requested (%s of %s).%s",
                  estimated ? "about " : "", share(allocs, calls), fig_count(a, allocs, estimated),
                  count_cell(b, (uint64_t)calls), estimated ? "about " : "",
                  share(bytes, requested), fig_bytes(c, bytes, estimated),
                  fmt_bytes(e, sizeof e, (unsigned long long)requested), why);
}

static void skip_line(struct document *d, const struct report *r)
{
    if (r->skip_count == 0) {
        doc_paragraph(d, "Wrappers: none folded (--skip none).");
        return;
    }
    if (!r->symbolized) {
        doc_paragraph(d, "Wrappers: not folded (--no-symbols: folding needs function names).");
        return;
    }
    char globs[1024] = "";
    size_t used = 0, folded = 0;
    for (size_t i = 0; i < r->skip_count && used < sizeof globs; i++) {
        int n = snprintf(globs + used, sizeof globs - used, "%s%s", i ? ", " : "", r->skip[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    for (size_t i = 0; i < r->site_count; i++)
        folded += r->sites[i].folded > 0;
    doc_paragraph(d,
                  "Wrappers folded into their callers at %zu sites (--skip GLOB adds one, --skip "
                  "none keeps them): %s.",
                  folded, globs);
}

void section_coverage(struct document *d, const struct report *r)
{
    coverage_line(d, r);
    if (r->site_count > 0)
        skip_line(d, r);
    double shallow = shallow_share(r);
    if (shallow <= 0)
        return;
    char mode[128];
    stacks_mode(r, mode, sizeof mode);
    doc_paragraph(d,
                  "Stacks are shallow: %.0f %% of the allocations at sites have stacks of one or "
                  "two frames, so sites stop at the allocating function.%s",
                  100 * shallow,
                  strcmp(mode, "fp") == 0
                      ? " With --stacks fp the program needs frame pointers "
                        "(-fno-omit-frame-pointer); run with --stacks always (libunwind, which "
                        "reads .eh_frame) for full stacks."
                      : "");
}

static const char *const rank_titles[] = {"By allocations", "By bytes", "By peak live bytes"};

static void range_cells(const struct report_site *s, enum site_rank k, char *samples, char *range)
{
    if (!s->estimated) {
        snprintf(samples, CELL, "-");
        snprintf(range, 2 * CELL, "exact");
        return;
    }
    count_cell(samples, s->allocs);
    if (k == RANK_BYTES)
        bytes_range(range, s->est.bytes_low, s->est.bytes_high);
    else if (k == RANK_LIVE)
        bytes_range(range, s->est.live_low, s->est.live_high);
    else
        count_range(range, s->est.allocs_low, s->est.allocs_high);
}

static void ranking_table(struct document *d, const struct report *r,
                          const struct report_site **ranked, size_t n, enum site_rank k,
                          bool *shown)
{
    bool estimates = any_estimated(ranked, n);
    const char *range_title = k == RANK_BYTES ? "bytes, 99 % range" : "allocations, 99 % range";
    if (estimates)
        doc_table(d, (const char *const[]){"site", "allocations", "bytes", "peak live",
                                           "queue allocs", "samples", range_title, "where", NULL});
    else
        doc_table(d, (const char *const[]){"site", "allocations", "bytes", "peak live",
                                           "queue allocs", "where", NULL});
    for (size_t i = 0; i < n; i++) {
        const struct report_site *s = ranked[i];
        size_t id = (size_t)(s - r->sites);
        shown[id] = true;
        char site[CELL], allocs[CELL], bytes[CELL], peak[CELL], queue[CELL], samples[CELL];
        char range[2 * CELL], where[512];
        snprintf(site, sizeof site, "#%zu", id + 1);
        site_where(r, s, where, sizeof where);
        fig_count(allocs, s->est.allocs, s->estimated);
        fig_bytes(bytes, s->est.bytes, s->estimated);
        fig_bytes(peak, s->est.peak_live_bytes, s->estimated);
        count_cell(queue, s->queue_allocs);
        range_cells(s, k, samples, range);
        if (estimates)
            doc_row(d,
                    (const char *const[]){site, allocs, bytes, peak, queue, samples, range, where});
        else
            doc_row(d, (const char *const[]){site, allocs, bytes, peak, queue, where});
    }
}

/* The line over a site's stack: its figures, estimates with their range and samples. */
static void site_heading(struct document *d, const struct report_site *s, size_t id)
{
    char via[160] = "";
    if (s->wrapper != NULL)
        snprintf(via, sizeof via, ", through %s (folded)", s->wrapper);
    if (!s->estimated) {
        doc_line(d,
                 "site #%zu: %" PRIu64 " allocations, %" PRIu64 " bytes, %" PRIu64
                 " inside queue operations%s",
                 id + 1, s->allocs, s->bytes, s->queue_allocs, via);
        return;
    }
    char a[CELL], range[2 * CELL], b[CELL], samples[CELL];
    doc_line(d,
             "site #%zu: %s allocations (99 %% range %s, from %s sample%s), %s, %" PRIu64
             " of the samples inside queue operations%s",
             id + 1, fig_count(a, s->est.allocs, true),
             count_range(range, s->est.allocs_low, s->est.allocs_high),
             count_cell(samples, s->allocs), s->allocs == 1 ? "" : "s",
             fig_bytes(b, s->est.bytes, true), s->queue_allocs, via);
}

static void stacks_of(struct document *d, const struct report *r, const bool *wanted)
{
    doc_lines(d);
    for (size_t i = 0; i < r->site_count; i++) {
        if (!wanted[i])
            continue;
        site_heading(d, &r->sites[i], i);
        stack_lines(d, r, &r->sites[i].stack);
    }
}

static void no_sites(struct document *d, const struct report *r)
{
    doc_paragraph(d,
                  "No sites: with stacks '%s' %s. Run with --stacks always or sampled:N "
                  "to see where every allocation comes from.",
                  r->process_count ? r->processes[0].stacks_mode : "?",
                  r->process_count && strcmp(r->processes[0].stacks_mode, "queue") == 0
                      ? "only allocations inside queue operations get a stack, and there "
                        "were none"
                      : "no stack was taken");
}

void section_sites(struct document *d, const struct report *r, unsigned top, bool *shown)
{
    doc_heading(d, 2, "Top allocation sites");
    if (r->site_count == 0) {
        no_sites(d, r);
        return;
    }
    doc_html_view(d, VIEW_SITES, 0); /* HTML: the flame graph and one sortable table instead */
    const struct report_site **ranked = calloc(r->site_count, sizeof *ranked);
    if (ranked == NULL)
        return;
    d->html_replacing = true;
    for (int k = RANK_ALLOCS; k <= RANK_PEAK; k++) {
        size_t n = rank_sites(r, (enum site_rank)k, ranked);
        doc_paragraph(d, "%s (%zu of %zu sites):", rank_titles[k], n < top ? n : top,
                      r->site_count);
        ranking_table(d, r, ranked, n < top ? n : top, (enum site_rank)k, shown);
        if (k != RANK_ALLOCS)
            continue;
        doc_chart(d, "Top sites by allocations", "allocations", true);
        char label[CELL];
        for (size_t i = 0; i < n && i < top; i++) {
            snprintf(label, sizeof label, "#%zu", (size_t)(ranked[i] - r->sites) + 1);
            doc_bar(d, label, ranked[i]->est.allocs);
        }
    }
    d->html_replacing = false;
    doc_paragraph(d, "Stacks of the sites above, innermost frame first:");
    stacks_of(d, r, shown);
    free(ranked);
}

static const char *live_title(enum live_scope scope)
{
    static const char *const titles[] = {"Live at exit", "Live now",
                                         "Live at exit, or at the last snapshot"};
    return titles[scope];
}

static void live_table(struct document *d, const struct report *r,
                       const struct report_site **ranked, size_t n)
{
    bool estimates = any_estimated(ranked, n);
    if (estimates)
        doc_table(d, (const char *const[]){"site", "live bytes", "blocks", "share of live",
                                           "samples", "live bytes, 99 % range", "where", NULL});
    else
        doc_table(d, (const char *const[]){"site", "live bytes", "blocks", "share of live", "where",
                                           NULL});
    for (size_t i = 0; i < n; i++) {
        const struct report_site *s = ranked[i];
        char site[CELL], bytes[CELL], blocks[CELL], part[CELL], samples[CELL];
        char range[2 * CELL], where[512];
        snprintf(site, sizeof site, "#%zu", (size_t)(s - r->sites) + 1);
        snprintf(part, sizeof part, "%.1f %%",
                 share(s->est.live_bytes, (double)r->totals.live_bytes));
        site_where(r, s, where, sizeof where);
        fig_bytes(bytes, s->est.live_bytes, s->estimated);
        fig_count(blocks, s->est.live_blocks, s->estimated);
        range_cells(s, RANK_LIVE, samples, range);
        if (s->estimated) /* the samples still live */
            count_cell(samples, s->allocs > s->frees ? s->allocs - s->frees : 0);
        if (estimates)
            doc_row(d, (const char *const[]){site, bytes, blocks, part, samples, range, where});
        else
            doc_row(d, (const char *const[]){site, bytes, blocks, part, where});
    }
}

void section_live(struct document *d, const struct report *r, unsigned top, bool *shown)
{
    enum live_scope scope = live_scope(r);
    char a[CELL], b[CELL];
    doc_heading(d, 2, "%s", live_title(scope));
    doc_paragraph(d, "%s in %s blocks %s (usable bytes, every allocation counted).",
                  fmt_bytes(a, sizeof a, r->totals.live_bytes),
                  count_cell(b, r->totals.live_blocks),
                  scope == LIVE_AT_EXIT ? "were still allocated at exit"
                  : scope == LIVE_NOW   ? "were allocated at the snapshot"
                                        : "were allocated at exit or at the last snapshot");
    if (r->site_count == 0) {
        no_sites(d, r);
        return;
    }
    const struct report_site **ranked = calloc(r->site_count, sizeof *ranked);
    bool *wanted = calloc(r->site_count, sizeof *wanted);
    size_t n = ranked && wanted ? rank_sites(r, RANK_LIVE, ranked) : 0;
    if (n == 0) {
        doc_paragraph(d, "No site holds live bytes: every block with a stack was freed.");
    } else {
        doc_paragraph(d, "Sites by bytes still allocated (%zu of %zu sites with live bytes):",
                      n < top ? n : top, n);
        live_table(d, r, ranked, n < top ? n : top);
        bool more = false;
        for (size_t i = 0; i < n && i < top; i++) {
            size_t id = (size_t)(ranked[i] - r->sites);
            wanted[id] = !shown[id];
            more = more || wanted[id];
            shown[id] = true;
        }
        if (more) {
            doc_paragraph(d, "Stacks of these sites not shown above, innermost frame first:");
            stacks_of(d, r, wanted);
        } else {
            doc_paragraph(d, "Their stacks are shown above.");
        }
    }
    free(ranked);
    free(wanted);
}

void section_temporary(struct document *d, const struct report *r, unsigned top)
{
    doc_heading(d, 2, "Temporary allocations");
    if (r->temporary_missing) {
        doc_paragraph(d, "Not counted: these dumps carry no totals.temporary (allocations freed "
                         "before the same thread's next allocation, as heaptrack counts them).");
        return;
    }
    char a[CELL], b[CELL];
    uint64_t calls = r->totals.allocs + r->totals.reallocs;
    doc_paragraph(d,
                  "%s of %s allocations (%.1f %%) were temporary: freed before the same thread's "
                  "next allocation.",
                  count_cell(a, r->totals.temporary), count_cell(b, calls),
                  share((double)r->totals.temporary, (double)calls));
    const struct report_site **ranked = calloc(r->site_count + 1, sizeof *ranked);
    size_t n = ranked ? rank_sites(r, RANK_TEMPORARY, ranked) : 0;
    if (n > 0) {
        doc_table(d,
                  (const char *const[]){"site", "temporary", "of its allocations", "where", NULL});
        for (size_t i = 0; i < n && i < top; i++) {
            const struct report_site *s = ranked[i];
            char site[CELL], count[CELL], part[CELL], where[512];
            snprintf(site, sizeof site, "#%zu", (size_t)(s - r->sites) + 1);
            snprintf(part, sizeof part, "%.1f %%", share(s->est.temporary, s->est.allocs));
            site_where(r, s, where, sizeof where);
            doc_row(d, (const char *const[]){site, fig_count(count, s->est.temporary, s->estimated),
                                             part, where});
        }
    }
    free(ranked);
}
