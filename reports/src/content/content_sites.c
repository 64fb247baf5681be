/* The report's sites: how much of the heap they cover, the top sites by allocations, bytes and
 * peak, what is still live at exit (or at a snapshot), and the temporary allocations. A sampled
 * site's figures are estimates: shown with '~', their samples and a 99 % range. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports_content.h"

static const char *count_range(char *buf, double low, double high)
{
    char a[CELL - 1], b[CELL - 1];
    report_fmt_count(a, sizeof a, (unsigned long long)(low + 0.5));
    report_fmt_count(b, sizeof b, (unsigned long long)(high + 0.5));
    snprintf(buf, 2 * CELL, "%s-%s", a, b);
    return buf;
}

static const char *bytes_range(char *buf, double low, double high)
{
    char a[CELL - 1], b[CELL - 1];
    report_fmt_bytes(a, sizeof a, (unsigned long long)(low + 0.5));
    report_fmt_bytes(b, sizeof b, (unsigned long long)(high + 0.5));
    snprintf(buf, 2 * CELL, "%s-%s", a, b);
    return buf;
}

static double share(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

static bool any_estimated(const struct report_site *const *sites, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (sites[i]->estimated)
            return true;
    return false;
}

/* "1,000 allocation calls" or, with reallocs, "1,013 allocation calls (1,000 allocations and 13
 * reallocs; a realloc counts at its site)": the one place reallocs are said. */
static const char *calls_phrase(char *out, size_t size, const struct report *r, bool explain)
{
    char a[CELL], b[CELL], c[CELL];
    uint64_t calls = r->totals.allocs + r->totals.reallocs;
    if (r->totals.reallocs == 0 || !explain)
        snprintf(out, size, "%s allocation calls", report_count_cell(a, calls));
    else
        snprintf(out, size,
                 "%s allocation calls (%s allocations and %s reallocs; a realloc counts at its "
                 "site)",
                 report_count_cell(a, calls), report_count_cell(b, r->totals.allocs),
                 report_count_cell(c, r->totals.reallocs));
    return out;
}

/* "about 100.4 % (99 % range 95.0-105.9 %)" for an estimate, "100.0 %" for an exact share. */
static const char *share_phrase(char *out, size_t size, double part, double low, double high,
                                double whole, bool estimated)
{
    if (!estimated)
        snprintf(out, size, "%.1f %%", share(part, whole));
    else
        snprintf(out, size, "about %.1f %% (99 %% range %.1f-%.1f %%)", share(part, whole),
                 share(low, whole), share(high, whole));
    return out;
}

/* "Coverage": the share of allocations and bytes the sites account for, and what limited it. */
static void coverage_line(struct document *d, const struct report *r)
{
    struct coverage c;
    report_coverage_of(r, &c);
    double calls = (double)(r->totals.allocs + r->totals.reallocs);
    double requested = (double)r->totals.bytes_requested;
    if (calls <= 0)
        return;
    char mode[128], phrase[256], allocs[160], bytes[160], b[CELL];
    report_stacks_mode(r, mode, sizeof mode);
    calls_phrase(phrase, sizeof phrase, r, true);
    if (!c.estimated && c.allocs >= calls && c.bytes >= requested) {
        report_doc_paragraph(d, "Coverage: the sites account for all %s and every byte requested.",
                             phrase);
        return;
    }
    if (strcmp(mode, "queue") == 0 || strcmp(mode, "off") == 0) {
        char sited[CELL];
        report_doc_paragraph(
            d,
            "Coverage: with stacks '%s' %s of the %s have a site. Run with qaudit "
            "run's default stacks (always) for sites covering the whole heap.",
            mode,
            strcmp(mode, "off") == 0 ? "none" : report_fig_count(sited, c.allocs, c.estimated),
            phrase);
        return;
    }
    report_doc_paragraph(d,
                         "Coverage: the sites account for %s of the %s and %s of the %s requested.",
                         share_phrase(allocs, sizeof allocs, c.allocs, c.allocs_low, c.allocs_high,
                                      calls, c.estimated),
                         phrase,
                         share_phrase(bytes, sizeof bytes, c.bytes, c.bytes_low, c.bytes_high,
                                      requested, c.estimated),
                         report_fmt_bytes(b, sizeof b, (unsigned long long)requested));
}

/* Whether name is one of the wrappers recognised from the stacks. */
static bool recognised_name(const struct report *r, const char *name)
{
    for (size_t i = 0; name != NULL && i < r->wrapper_count; i++)
        if (strcmp(r->wrappers[i].name, name) == 0)
            return true;
    return false;
}

/* names (at most 8, then "...") joined by ", " into list. */
static void name_list(const char *const *names, size_t count, char *list, size_t size)
{
    size_t used = 0;
    list[0] = '\0';
    for (size_t k = 0; k < count && k < 8 && used < size; k++) {
        int n = snprintf(list + used, size - used, "%s%s", k ? ", " : "", names[k]);
        used += n > 0 ? (size_t)n : 0;
    }
    if (count > 8 && used < size)
        snprintf(list + used, size - used, ", ...");
}

/* The wrappers folded, only where one was: those the globs name, by the functions they were, and
 * those recognised from the stacks. */
static void skip_line(struct document *d, const struct report *r)
{
    const char *named[9];
    size_t distinct = 0, folded = 0;
    for (size_t i = 0; i < r->site_count; i++) {
        const char *w = r->sites[i].wrapper;
        if (r->sites[i].folded == 0)
            continue;
        folded++;
        bool seen = w == NULL || recognised_name(r, w);
        for (size_t k = 0; k < distinct && !seen; k++)
            seen = strcmp(named[k], w) == 0;
        if (!seen && distinct < 9)
            named[distinct++] = w;
    }
    if (folded == 0)
        return; /* the globs matter only where they changed a site */
    const char **recognised = calloc(r->wrapper_count + 1, sizeof *recognised);
    for (size_t i = 0; recognised && i < r->wrapper_count; i++)
        recognised[i] = r->wrappers[i].name;
    char by_name[1024], by_stacks[1024], sites[32], also[1200] = "";
    name_list(named, distinct, by_name, sizeof by_name);
    name_list(recognised, recognised ? r->wrapper_count : 0, by_stacks, sizeof by_stacks);
    free(recognised);
    if (r->wrapper_count > 0)
        snprintf(also, sizeof also,
                 "%srecognised from the stacks (every allocation under them goes straight to "
                 "the allocator, for %d or more callers): %s",
                 distinct ? "; " : "", REPORT_WRAPPER_CALLERS, by_stacks);
    report_doc_paragraph(
        d,
        "Wrappers folded into their callers at %s site%s: %s%s (--skip GLOB adds one, "
        "--skip none keeps them).",
        report_fmt_count(sites, sizeof sites, folded), folded == 1 ? "" : "s", by_name, also);
}

void report_section_coverage(struct document *d, const struct report *r)
{
    coverage_line(d, r);
    if (r->site_count > 0)
        skip_line(d, r);
    double shallow = report_shallow_share(r);
    if (shallow <= 0)
        return;
    char mode[128];
    report_stacks_mode(r, mode, sizeof mode);
    report_doc_paragraph(
        d,
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
    report_count_cell(samples, s->allocs);
    if (k == RANK_BYTES)
        bytes_range(range, s->est.bytes_low, s->est.bytes_high);
    else if (k == RANK_LIVE)
        bytes_range(range, s->est.live_low, s->est.live_high);
    else
        count_range(range, s->est.allocs_low, s->est.allocs_high);
}

/* A table's columns picked as the report needs them: header and cells kept side by side. */
struct columns {
    const char *header[10], *cell[10];
    size_t count;
};

static void column(struct columns *c, bool wanted, const char *header, const char *cell)
{
    if (!wanted)
        return;
    c->header[c->count] = header;
    c->cell[c->count++] = cell;
    c->header[c->count] = NULL;
}

static void ranking_table(struct document *d, const struct report *r,
                          const struct report_site **ranked, size_t n, enum site_rank k,
                          bool *shown)
{
    bool estimates = any_estimated(ranked, n);
    const char *range_title = k == RANK_BYTES ? "bytes, 99 % range" : "allocations, 99 % range";
    for (size_t i = 0; i < n; i++) {
        const struct report_site *s = ranked[i];
        size_t id = (size_t)(s - r->sites);
        shown[id] = true;
        char site[CELL], allocs[CELL], bytes[CELL], peak[CELL], queue[CELL], samples[CELL];
        char range[2 * CELL], where[512];
        snprintf(site, sizeof site, "#%zu", id + 1);
        report_site_where(r, s, d->long_names, where, sizeof where);
        report_fig_count(allocs, s->est.allocs, s->estimated);
        report_fig_bytes(bytes, s->est.bytes, s->estimated);
        report_fig_bytes(peak, s->est.peak_live_bytes, s->estimated);
        report_count_cell(queue, s->queue_allocs);
        range_cells(s, k, samples, range);
        struct columns c = {0};
        column(&c, true, "site", site);
        column(&c, true, "allocations", allocs);
        column(&c, true, "bytes", bytes);
        column(&c, true, "peak live", peak);
        column(&c, d->queue_audit, "queue allocs", queue);
        column(&c, estimates, "samples", samples);
        column(&c, estimates, range_title, range);
        column(&c, true, "where", where);
        if (i == 0)
            report_doc_table(d, c.header);
        report_doc_row(d, c.cell);
    }
}

/* The line over a site's stack: its figures, estimates with their range and samples; the queue's
 * share only in a queue audit. */
static void site_heading(struct document *d, const struct report_site *s, size_t id)
{
    char via[160] = "", queue[96] = "", a[CELL], b[CELL], range[2 * CELL], samples[CELL];
    if (s->wrapper != NULL)
        snprintf(via, sizeof via, ", through %s (folded)", s->wrapper);
    if (d->queue_audit)
        snprintf(queue, sizeof queue, ", %s%s inside queue operations",
                 report_count_cell(samples, s->queue_allocs),
                 s->estimated ? " of the samples" : "");
    if (!s->estimated) {
        report_doc_line(d, "site #%zu: %s allocation%s, %s%s%s", id + 1,
                        report_count_cell(a, s->allocs), s->allocs == 1 ? "" : "s",
                        report_fmt_bytes(b, sizeof b, s->bytes), queue, via);
        return;
    }
    report_doc_line(d, "site #%zu: %s allocations (99 %% range %s, from %s sample%s), %s%s%s",
                    id + 1, report_fig_count(a, s->est.allocs, true),
                    count_range(range, s->est.allocs_low, s->est.allocs_high),
                    report_count_cell(samples, s->allocs), s->allocs == 1 ? "" : "s",
                    report_fig_bytes(b, s->est.bytes, true), queue, via);
}

static void stacks_of(struct document *d, const struct report *r, const bool *wanted)
{
    report_doc_lines(d);
    for (size_t i = 0; i < r->site_count; i++) {
        if (!wanted[i])
            continue;
        site_heading(d, &r->sites[i], i);
        report_stack_lines(d, r, &r->sites[i].stack);
    }
}

static void no_sites(struct document *d, const struct report *r)
{
    report_doc_paragraph(d,
                         "No sites: with stacks '%s' %s. Run with qaudit run's default stacks "
                         "(always) to see where every allocation comes from.",
                         r->process_count ? r->processes[0].stacks_mode : "?",
                         r->process_count && strcmp(r->processes[0].stacks_mode, "queue") == 0
                             ? "only allocations inside queue operations get a stack, and there "
                               "were none"
                             : "no stack was taken");
}

void report_section_sites(struct document *d, const struct report *r, unsigned top, bool *shown)
{
    report_doc_heading(d, 2, "Top allocation sites");
    if (r->site_count == 0) {
        no_sites(d, r);
        return;
    }
    report_doc_html_view(d, VIEW_SITES,
                         0); /* HTML: the flame graph and one sortable table instead */
    const struct report_site **ranked = calloc(r->site_count, sizeof *ranked);
    if (ranked == NULL)
        return;
    d->html_replacing = true;
    for (int k = RANK_ALLOCS; k <= RANK_PEAK; k++) {
        size_t n = report_rank_sites(r, (enum site_rank)k, ranked);
        report_doc_paragraph(d, "%s (%zu of %zu sites):", rank_titles[k], n < top ? n : top,
                             r->site_count);
        ranking_table(d, r, ranked, n < top ? n : top, (enum site_rank)k, shown);
        if (k != RANK_ALLOCS)
            continue;
        report_doc_chart(d, "Top sites by allocations", "allocations", true);
        char label[CELL];
        for (size_t i = 0; i < n && i < top; i++) {
            snprintf(label, sizeof label, "#%zu", (size_t)(ranked[i] - r->sites) + 1);
            report_doc_bar(d, label, ranked[i]->est.allocs);
        }
    }
    d->html_replacing = false;
    report_doc_paragraph(d, "Stacks of the sites above, innermost frame first:");
    stacks_of(d, r, shown);
    free(ranked);
}

static const char *live_title(enum live_scope scope)
{
    static const char *const titles[] = {
        "Live at exit", "Live now", "Live at exit, or at the last snapshot", "Live at the detach"};
    return titles[scope];
}

static void live_table(struct document *d, const struct report *r,
                       const struct report_site **ranked, size_t n)
{
    bool estimates = any_estimated(ranked, n);
    double whole = report_live_share_whole(r);
    if (estimates)
        report_doc_table(d,
                         (const char *const[]){"site", "live bytes", "blocks", "share of live",
                                               "samples", "live bytes, 99 % range", "where", NULL});
    else
        report_doc_table(d, (const char *const[]){"site", "live bytes", "blocks", "share of live",
                                                  "where", NULL});
    for (size_t i = 0; i < n; i++) {
        const struct report_site *s = ranked[i];
        char site[CELL], bytes[CELL], blocks[CELL], part[CELL], samples[CELL];
        char range[2 * CELL], where[512];
        snprintf(site, sizeof site, "#%zu", (size_t)(s - r->sites) + 1);
        snprintf(part, sizeof part, "%.1f %%", share(s->est.live_bytes, whole));
        report_site_where(r, s, d->long_names, where, sizeof where);
        report_fig_bytes(bytes, s->est.live_bytes, s->estimated);
        report_fig_count(blocks, s->est.live_blocks, s->estimated);
        range_cells(s, RANK_LIVE, samples, range);
        if (s->estimated) /* the samples still live */
            report_count_cell(samples, s->allocs > s->frees ? s->allocs - s->frees : 0);
        if (estimates)
            report_doc_row(d,
                           (const char *const[]){site, bytes, blocks, part, samples, range, where});
        else
            report_doc_row(d, (const char *const[]){site, bytes, blocks, part, where});
    }
}

/* Live blocks without a site, or, where the stacks were sampled, that some may have none. */
static void unsited_paragraph(struct document *d, const struct report *r)
{
    char sentence[5000], command[4096];
    struct unsited u;
    report_live_without_site(r, &u);
    if (report_unsited_sentence(r, sentence, sizeof sentence)) {
        report_doc_paragraph(d, "%s", sentence);
    } else if (!u.every_site && r->totals.live_blocks > 0) {
        report_attribute_command(r, command, sizeof command);
        report_doc_paragraph(
            d,
            "The sites' estimates account for every live block, but sampled stacks "
            "cannot promise that each site holding few small blocks is among them: "
            "`%s` gives every block its site.",
            command);
    }
}

/* Sites count requested bytes (as valgrind and heaptrack do), the totals usable ones: which is
 * which, and, where every live block has an exact site, the allocator's rounding between them.
 * Said above the table of live sites, so only when a site holds live bytes. */
static void units_paragraph(struct document *d, const struct report *r)
{
    char a[CELL], b[CELL];
    double rounding = report_live_rounding_bytes(r);
    if (rounding < 0.5) {
        if (rounding < 0)
            report_doc_paragraph(
                d, "The sites below count requested bytes, what each call asked for.");
        return;
    }
    double sited = (double)r->totals.live_bytes - rounding;
    report_doc_paragraph(
        d,
        "The sites below count requested bytes, what each call asked for: %s in all; "
        "the other %s (%.1f %%) is the allocator's rounding of those blocks to its "
        "size classes.",
        report_fmt_bytes(a, sizeof a, (unsigned long long)(sited + 0.5)),
        report_fmt_bytes(b, sizeof b, (unsigned long long)(rounding + 0.5)),
        share(rounding, (double)r->totals.live_bytes));
}

/* The live sites listed: the top N, and any holding >= 1 % of the live bytes or >= 100 blocks,
 * so that no leak of size is left out; their number. Blocks held by design are said apart. */
static size_t listed_live(const struct report *r, unsigned top, const struct report_site **ranked,
                          size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (ranked[i]->by_design == NULL && (kept < top || report_live_worth_listing(r, ranked[i])))
            ranked[kept++] = ranked[i];
    return kept;
}

bool report_by_design_sentence(const struct report *r, bool detailed, char *out, size_t size)
{
    double bytes = 0, blocks = 0;
    size_t sites = 0, used = 0;
    bool estimated = false;
    char list[1024] = "", a[CELL], b[CELL];
    /* What to look at first speaks of the leading program alone (programs.c); Live at exit of
     * every dump. */
    uint64_t lead = detailed ? 0 : report_lead_program(r, NULL);
    for (size_t i = 0; i < r->site_count; i++) {
        const struct report_site *s = &r->sites[i];
        if (s->by_design == NULL || s->est.live_blocks < 0.5 || !report_site_of_lead(s, lead))
            continue;
        bytes += s->est.live_bytes;
        blocks += s->est.live_blocks;
        estimated = estimated || s->estimated;
        if (sites++ >= 4 || used >= sizeof list)
            continue;
        int n = detailed ? snprintf(list + used, sizeof list - used, "%s#%zu, %s: %s",
                                    sites > 1 ? "; " : "", i + 1, s->by_design,
                                    report_fig_bytes(a, s->est.live_bytes, s->estimated))
                         : snprintf(list + used, sizeof list - used, "%s#%zu",
                                    sites > 1 ? ", " : "", i + 1);
        used += n > 0 ? (size_t)n : 0;
    }
    if (sites == 0)
        return false;
    const char *more = sites <= 4 ? ""
                       : detailed ? "; and more (live.held_by_design in JSON)"
                                  : ", ...";
    if (!detailed)
        snprintf(out, size,
                 "Held by design, not leaks: %s in %s block%s (site%s %s%s: the C and C++ "
                 "runtime's start-up blocks; see %s).",
                 report_fig_bytes(a, bytes, estimated), report_fig_count(b, blocks, estimated),
                 blocks >= 1.5 ? "s" : "", sites > 1 ? "s" : "", list, more,
                 report_live_scope(r) == LIVE_NOW ? "Live now" : "Live at exit");
    else
        snprintf(out, size,
                 "Held by design, not leaks: %s in %s block%s still allocated %s are the C and C++ "
                 "runtime's start-up blocks, kept for the whole run (valgrind and heaptrack do "
                 "not report them either): %s%s.",
                 report_fig_bytes(a, bytes, estimated), report_fig_count(b, blocks, estimated),
                 blocks >= 1.5 ? "s" : "", report_live_scope_phrase(report_live_scope(r)), list,
                 more);
    return true;
}

/* The live sites ranked (n of them, by live bytes) but those held by design, listed with the
 * stacks not shown yet; the blocks held by design said before them. */
static void live_sites(struct document *d, const struct report *r, unsigned top, bool *shown,
                       const struct report_site **ranked, size_t n, bool *wanted)
{
    size_t leaking = 0;
    for (size_t i = 0; i < n; i++)
        leaking += ranked[i]->by_design == NULL;
    size_t listed = listed_live(r, top, ranked, n);
    char sentence[2048];
    if (report_by_design_sentence(r, true, sentence, sizeof sentence))
        report_doc_paragraph(d, "%s", sentence);
    if (listed == 0) {
        report_doc_paragraph(d, "No other site holds live bytes.");
        return;
    }
    units_paragraph(d, r); /* of the sites listed below: none, none to say */
    report_doc_paragraph(
        d,
        "Sites by bytes still allocated: %zu of the %zu holding any%s (the top %u, and "
        "every site with >= 1 %% of the live bytes or >= 100 blocks):",
        listed, leaking, leaking < n ? " besides those held by design" : "", top);
    live_table(d, r, ranked, listed);
    bool more = false;
    for (size_t i = 0; i < listed; i++) {
        size_t id = (size_t)(ranked[i] - r->sites);
        wanted[id] = !shown[id];
        more = more || wanted[id];
        shown[id] = true;
    }
    if (more) {
        report_doc_paragraph(d, "Stacks of these sites not shown above, innermost frame first:");
        stacks_of(d, r, wanted);
    } else {
        report_doc_paragraph(d, "Their stacks are shown above.");
    }
}

void report_section_live(struct document *d, const struct report *r, unsigned top, bool *shown)
{
    enum live_scope scope = report_live_scope(r);
    char a[CELL], b[CELL];
    report_doc_heading(d, 2, "%s", live_title(scope));
    report_doc_paragraph(
        d, "%s in %s block%s were %sallocated %s (usable bytes, every allocation counted).",
        report_fmt_bytes(a, sizeof a, r->totals.live_bytes),
        report_count_cell(b, r->totals.live_blocks), r->totals.live_blocks == 1 ? "" : "s",
        scope == LIVE_AT_EXIT ? "still " : "", report_live_scope_phrase(scope));
    const struct report_inherited *in = &r->totals.inherited;
    uint64_t freed = in->freed_blocks < in->blocks ? in->freed_blocks : in->blocks;
    if (in->processes > 0 && in->blocks > freed)
        report_doc_paragraph(
            d,
            "Of them, %s blocks (%s) are what forked processes inherited at their fork "
            "and still held: their parents allocated them, the sites below are each "
            "process's own.",
            report_count_cell(a, in->blocks - freed),
            report_fmt_bytes(b, sizeof b,
                             in->bytes > in->freed_bytes ? in->bytes - in->freed_bytes : 0));
    const struct report_site **ranked = calloc(r->site_count + 1, sizeof *ranked);
    bool *wanted = calloc(r->site_count + 1, sizeof *wanted);
    size_t n = ranked && wanted ? report_rank_sites(r, RANK_LIVE, ranked) : 0;
    if (r->site_count == 0)
        no_sites(d, r);
    else if (n == 0)
        report_doc_paragraph(d, "No site holds live bytes: every block with a stack was freed.");
    else
        live_sites(d, r, top, shown, ranked, n, wanted);
    unsited_paragraph(d, r);
    free(ranked);
    free(wanted);
}

void report_section_temporary(struct document *d, const struct report *r, unsigned top)
{
    report_doc_heading(d, 2, "Temporary allocations");
    if (r->temporary_missing) {
        report_doc_paragraph(
            d, "Not counted: these dumps carry no totals.temporary (allocations freed "
               "before the same thread's next allocation or free, as heaptrack counts "
               "them).");
        return;
    }
    char a[CELL], phrase[256];
    uint64_t calls = r->totals.allocs + r->totals.reallocs;
    report_doc_paragraph(
        d,
        "%s of the %s (%.1f %%) were temporary: freed before the same thread's next "
        "allocation or free (a realloc frees its old block). This is heaptrack's "
        "definition, the count its run prints at its end; heaptrack_print and "
        "heaptrack_gui count more, as they take a free for its block's allocation "
        "when the two have the same size and stack, and heaptrack orders the events "
        "of all threads as one.",
        report_count_cell(a, r->totals.temporary), calls_phrase(phrase, sizeof phrase, r, false),
        share((double)r->totals.temporary, (double)calls));
    const struct report_site **ranked = calloc(r->site_count + 1, sizeof *ranked);
    size_t n = ranked ? report_rank_sites(r, RANK_TEMPORARY, ranked) : 0;
    if (n > 0) {
        report_doc_table(
            d, (const char *const[]){"site", "temporary", "of its allocations", "where", NULL});
        for (size_t i = 0; i < n && i < top; i++) {
            const struct report_site *s = ranked[i];
            char site[CELL], count[CELL], part[CELL], where[512];
            snprintf(site, sizeof site, "#%zu", (size_t)(s - r->sites) + 1);
            snprintf(part, sizeof part, "%.1f %%", share(s->est.temporary, s->est.allocs));
            report_site_where(r, s, d->long_names, where, sizeof where);
            report_doc_row(
                d, (const char *const[]){
                       site, report_fig_count(count, s->est.temporary, s->estimated), part, where});
        }
    }
    free(ranked);
}
