/* What qaudit diff says, in every format: the two runs, what changed most, the totals side by side,
 * the sites ranked by their change, each before and after. JSON is qaudit-diff/1. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports_content.h"
#include "reports/diff.h"

static const char *const side_names[2] = {"base", "new"};
static const char *const figure_titles[DIFF_FIGURES] = {"allocations", "bytes", "live bytes",
                                                        "temporary"};

/* When the live figures were taken: "at exit" only when every dump of both runs is a final one;
 * a snapshot's blocks are live at the snapshot, not at exit. */
static const char *live_when(const struct report_diff *d)
{
    enum live_scope base = report_live_scope(d->run[DIFF_BASE]),
                    now = report_live_scope(d->run[DIFF_NEW]);
    return report_live_scope_phrase(base == now ? base : LIVE_MIXED);
}

static bool is_bytes(enum diff_figure f)
{
    return f == DIFF_BYTES || f == DIFF_LIVE;
}

static const char *figure_text(char *buf, enum diff_figure f, double v, bool estimated)
{
    return is_bytes(f) ? report_fig_bytes(buf, v, estimated) : report_fig_count(buf, v, estimated);
}

/* "+1,000", "-48.83 MiB", "0": a change with its sign. */
static const char *change_text(char *buf, double change, bool bytes, bool estimated)
{
    char n[CELL - 2];
    double size = fabs(change);
    if (bytes)
        report_fmt_bytes(n, sizeof n, (unsigned long long)(size + 0.5));
    else
        report_fmt_count(n, sizeof n, (unsigned long long)(size + 0.5));
    bool zero = size < 0.5;
    snprintf(buf, CELL, "%s%s%s", estimated && !zero ? "~" : "",
             zero         ? ""
             : change > 0 ? "+"
                          : "-",
             n);
    return buf;
}

static const char *status_of(const struct diff_site *s)
{
    if (s->site[DIFF_BASE] == NULL)
        return "new";
    if (s->site[DIFF_NEW] == NULL)
        return "gone";
    for (int f = 0; f < DIFF_FIGURES; f++)
        if (fabs(s->value[DIFF_NEW][f] - s->value[DIFF_BASE][f]) >= 0.5)
            return "changed";
    return "same";
}

/* The site's where, names shortened unless long_names (the JSON's). */
static void diff_where(const struct report_diff *d, const struct diff_site *s, bool long_names,
                       char *out, size_t size)
{
    enum diff_side side = s->site[DIFF_NEW] != NULL ? DIFF_NEW : DIFF_BASE;
    report_site_where(d->run[side], s->site[side], long_names, out, size);
}

static bool either_estimated(const struct diff_site *s)
{
    return s->estimated[DIFF_BASE] || s->estimated[DIFF_NEW];
}

static void runs_table(struct document *d, const struct report_diff *diff)
{
    report_doc_heading(d, 1, "qaudit diff");
    report_doc_table(d, (const char *const[]){"run", "dumps", "pids", "program", "stacks", NULL});
    for (int side = 0; side < 2; side++) {
        const struct report *r = diff->run[side];
        char dumps[CELL], pids[256] = "", mode[128];
        snprintf(dumps, sizeof dumps, "%zu", r->process_count + r->superseded + r->duplicates);
        size_t used = 0;
        for (size_t i = 0; i < r->process_count && used + 24 < sizeof pids; i++)
            used += (size_t)snprintf(pids + used, sizeof pids - used, "%s%" PRIu64, i ? ", " : "",
                                     r->processes[i].pid);
        report_stacks_mode(r, mode, sizeof mode);
        const struct report_process *p = r->process_count ? &r->processes[0] : NULL;
        report_doc_row(d, (const char *const[]){side_names[side], dumps, pids,
                                                p == NULL            ? "-"
                                                : p->argv[0] != '\0' ? p->argv
                                                                     : p->exe,
                                                mode});
    }
}

/* The site whose figure f changed most, or NULL when none changed. */
static const struct diff_site *largest_change(const struct report_diff *d, enum diff_figure f)
{
    const struct diff_site *top = NULL;
    double best = 0.5;
    for (size_t i = 0; i < d->count; i++) {
        double c = fabs(d->sites[i].value[DIFF_NEW][f] - d->sites[i].value[DIFF_BASE][f]);
        if (c >= best) {
            best = c;
            top = &d->sites[i];
        }
    }
    return top;
}

static void summary(struct document *d, const struct report_diff *diff)
{
    report_doc_list(d, TONE_INFO, "What changed most");
    bool any = false;
    for (int f = 0; f < DIFF_FIGURES; f++) {
        const struct diff_site *s = largest_change(diff, (enum diff_figure)f);
        if (s == NULL)
            continue;
        any = true;
        char where[512], change[CELL], before[CELL], after[CELL], live[64];
        diff_where(diff, s, false, where, sizeof where);
        const char *const titles[DIFF_FIGURES] = {"Allocations", "Bytes allocated", live,
                                                  "Temporary allocations"};
        snprintf(live, sizeof live, "Live bytes %s", live_when(diff));
        report_doc_item(
            d, "%s: site #%zu, %s (%s): %s, from %s to %s.", titles[f],
            (size_t)(s - diff->sites) + 1, where, status_of(s),
            change_text(change, s->value[DIFF_NEW][f] - s->value[DIFF_BASE][f],
                        is_bytes((enum diff_figure)f), either_estimated(s)),
            figure_text(before, (enum diff_figure)f, s->value[DIFF_BASE][f],
                        s->estimated[DIFF_BASE]),
            figure_text(after, (enum diff_figure)f, s->value[DIFF_NEW][f], s->estimated[DIFF_NEW]));
    }
    if (!any)
        report_doc_item(d, "No site changed: every figure is the same in both runs.");
}

/* The totals of both runs: the figures that reconcile with each report. */
struct total {
    char what[64];
    double value[2];
    bool bytes;
};

static size_t totals_of(const struct report_diff *d, struct total *t)
{
    size_t n = 0;
    t[n++] = (struct total){"allocation calls", {0}, false};
    t[n++] = (struct total){"bytes requested", {0}, true};
    t[n++] = (struct total){"peak live bytes", {0}, true};
    t[n++] = (struct total){"", {0}, true};
    t[n++] = (struct total){"", {0}, false};
    t[n++] = (struct total){"temporary allocations", {0}, false};
    snprintf(t[3].what, sizeof t[3].what, "live bytes %s", live_when(d));
    snprintf(t[4].what, sizeof t[4].what, "live blocks %s", live_when(d));
    for (int side = 0; side < 2; side++) {
        const struct report_totals *r = &d->run[side]->totals;
        t[0].value[side] = (double)(r->allocs + r->reallocs);
        t[1].value[side] = (double)r->bytes_requested;
        t[2].value[side] = (double)r->peak_live_bytes;
        t[3].value[side] = (double)r->live_bytes;
        t[4].value[side] = (double)r->live_blocks;
        t[5].value[side] = (double)r->temporary;
    }
    return n;
}

static void totals_section(struct document *d, const struct report_diff *diff)
{
    struct total t[8];
    size_t n = totals_of(diff, t);
    report_doc_heading(d, 2, "Totals");
    report_doc_table(d, (const char *const[]){"what", "base", "new", "change", NULL});
    for (size_t i = 0; i < n; i++) {
        char base[CELL], now[CELL], change[2 * CELL], c[CELL];
        double delta = t[i].value[DIFF_NEW] - t[i].value[DIFF_BASE];
        if (t[i].value[DIFF_BASE] > 0 && fabs(delta) >= 0.5)
            snprintf(change, sizeof change, "%s (%+.1f %%)",
                     change_text(c, delta, t[i].bytes, false),
                     100.0 * delta / t[i].value[DIFF_BASE]);
        else
            change_text(change, delta, t[i].bytes, false);
        report_doc_row(
            d, (const char *const[]){t[i].what,
                                     t[i].bytes ? report_fig_bytes(base, t[i].value[0], false)
                                                : report_fig_count(base, t[i].value[0], false),
                                     t[i].bytes ? report_fig_bytes(now, t[i].value[1], false)
                                                : report_fig_count(now, t[i].value[1], false),
                                     change});
    }
}

static void sites_section(struct document *d, const struct report_diff *diff, unsigned top)
{
    report_doc_heading(d, 2, "Sites by change in %s", figure_titles[diff->sort]);
    size_t shown = diff->changed < top ? diff->changed : top;
    report_doc_paragraph(
        d,
        "%zu sites in either run, %zu of them changed; the %zu largest change%s (site "
        "numbers are ranks here). Sites match by the functions of their frames.",
        diff->count, diff->changed, shown, shown == 1 ? "" : "s");
    if (shown == 0)
        return;
    report_doc_table(d, (const char *const[]){"site", "status", "allocations", "bytes",
                                              "live bytes", "temporary", "where", NULL});
    for (size_t i = 0; i < shown; i++) {
        const struct diff_site *s = &diff->sites[i];
        char site[CELL], cells[DIFF_FIGURES][CELL], where[512];
        snprintf(site, sizeof site, "#%zu", i + 1);
        for (int f = 0; f < DIFF_FIGURES; f++)
            change_text(cells[f], s->value[DIFF_NEW][f] - s->value[DIFF_BASE][f],
                        is_bytes((enum diff_figure)f), either_estimated(s));
        diff_where(diff, s, false, where, sizeof where);
        report_doc_row(d, (const char *const[]){site, status_of(s), cells[0], cells[1], cells[2],
                                                cells[3], where});
    }
    report_doc_paragraph(d, "Before and after (base -> new):");
    report_doc_lines(d);
    for (size_t i = 0; i < shown; i++) {
        const struct diff_site *s = &diff->sites[i];
        char where[512], line[1024] = "";
        size_t used = 0;
        diff_where(diff, s, false, where, sizeof where);
        for (int f = 0; f < DIFF_FIGURES; f++) {
            char a[CELL], b[CELL];
            used += (size_t)snprintf(
                line + used, sizeof line - used, "%s%s %s -> %s", f ? "; " : "", figure_titles[f],
                figure_text(a, (enum diff_figure)f, s->value[DIFF_BASE][f], s->estimated[0]),
                figure_text(b, (enum diff_figure)f, s->value[DIFF_NEW][f], s->estimated[1]));
        }
        report_doc_line(d, "#%zu %s: %s", i + 1, where, line);
    }
}

static void precision_section(struct document *d, const struct report_diff *diff)
{
    report_doc_heading(d, 2, "Precision");
    bool estimated =
        report_any_site_estimated(diff->run[0]) || report_any_site_estimated(diff->run[1]);
    if (estimated)
        report_doc_paragraph(d, "Figures marked '~' are estimates from sampled stacks: a change "
                                "smaller than their 99 %% ranges (qaudit report shows them) may be "
                                "sampling noise. qaudit run's default stacks (always) give exact "
                                "figures.");
    else
        report_doc_paragraph(d, "Every figure is counted, none estimated.");
    for (int side = 0; side < 2; side++)
        if (diff->run[side]->trust.partial)
            report_doc_paragraph(d,
                                 "The %s run's counts are partial: qaudit report on its dumps says "
                                 "why.",
                                 side_names[side]);
    if (diff->run[0]->temporary_missing || diff->run[1]->temporary_missing)
        report_doc_paragraph(d,
                             "Temporary allocations are not counted in the dumps of one run: its "
                             "column reads 0 there.");
}

static void build(struct document *d, const struct report_diff *diff, unsigned top)
{
    runs_table(d, diff);
    summary(d, diff);
    totals_section(d, diff);
    sites_section(d, diff, top);
    precision_section(d, diff);
}

/* qaudit-diff/1 */
static json_t *figures_json(const struct diff_site *s, enum diff_side side)
{
    if (s->site[side] == NULL)
        return json_null();
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:b}", "allocs",
                     (json_int_t)llround(s->value[side][DIFF_ALLOCS]), "bytes",
                     (json_int_t)llround(s->value[side][DIFF_BYTES]), "live_bytes",
                     (json_int_t)llround(s->value[side][DIFF_LIVE]), "live_blocks",
                     (json_int_t)llround(s->live_blocks[side]), "temporary",
                     (json_int_t)llround(s->value[side][DIFF_TEMPORARY]), "estimated",
                     s->estimated[side]);
}

static json_t *site_json(const struct report_diff *d, const struct diff_site *s, size_t rank)
{
    char where[4096];
    diff_where(d, s, true, where, sizeof where);
    json_t *change = json_object();
    for (int f = 0; f < DIFF_FIGURES; f++)
        json_object_set_new(
            change, f == DIFF_LIVE ? "live_bytes" : diff_figure_names[f],
            json_integer((json_int_t)llround(s->value[DIFF_NEW][f] - s->value[DIFF_BASE][f])));
    json_object_set_new(change, "live_blocks",
                        json_integer((json_int_t)llround(s->live_blocks[1] - s->live_blocks[0])));
    return json_pack("{s:I, s:s, s:s, s:s, s:o, s:o, s:o}", "rank", (json_int_t)rank, "status",
                     status_of(s), "where", where, "functions", s->key, "base",
                     figures_json(s, DIFF_BASE), "new", figures_json(s, DIFF_NEW), "change",
                     change);
}

static json_t *run_json(const struct report *r)
{
    json_t *dumps = json_array();
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        char mode[128];
        report_process_stacks(p, mode, sizeof mode);
        json_array_append_new(dumps, json_pack("{s:I, s:s, s:s, s:s, s:s}", "pid",
                                               (json_int_t)p->pid, "exe", p->exe, "argv", p->argv,
                                               "source", p->source, "stacks", mode));
    }
    return json_pack("{s:o, s:b, s:s}", "dumps", dumps, "symbolized", r->symbolized, "counts",
                     r->trust.partial ? "partial" : "exact");
}

static json_t *diff_json(const struct report_diff *d)
{
    struct total t[8];
    size_t n = totals_of(d, t);
    static const char *const keys[] = {"allocation_calls", "bytes_requested", "peak_live_bytes",
                                       "live_bytes",       "live_blocks",     "temporary"};
    json_t *totals = json_object();
    for (size_t i = 0; i < n; i++)
        json_object_set_new(totals, keys[i],
                            json_pack("{s:I, s:I, s:I}", "base", (json_int_t)t[i].value[0], "new",
                                      (json_int_t)t[i].value[1], "change",
                                      (json_int_t)(t[i].value[1] - t[i].value[0])));
    json_t *sites = json_array();
    for (size_t i = 0; i < d->count; i++)
        json_array_append_new(sites, site_json(d, &d->sites[i], i + 1));
    return json_pack("{s:s, s:s, s:o, s:o, s:o, s:I, s:I, s:o}", "format", "qaudit-diff/1", "sort",
                     diff_figure_names[d->sort], "base", run_json(d->run[0]), "new",
                     run_json(d->run[1]), "totals", totals, "sites_total", (json_int_t)d->count,
                     "sites_changed", (json_int_t)d->changed, "sites", sites);
}

void report_diff_render_json(FILE *out, const struct report_diff *diff)
{
    json_t *doc = diff_json(diff);
    json_dumpf(doc, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(doc);
}

void report_diff_document(struct document *d, const struct report_diff *diff, unsigned top)
{
    build(d, diff, top);
}
