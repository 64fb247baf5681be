/* The HTML page's one site table, in place of the text report's three rankings: the sites in the
 * top N by allocations, bytes, peak live or live bytes, each once, sortable by any column (the
 * inline script), so sorted by a column its top N come first. Each cell carries its exact value
 * in data-v for sorting; an estimate shows '~' and says its range on hover. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reports_render.h"
#include "common/xml_escape.h"

enum column { COL_ALLOCS, COL_BYTES, COL_PEAK, COL_LIVE, COL_TEMPORARY, COL_QUEUE, COL_COUNT };

static const char *const headers[COL_COUNT] = {"allocations", "bytes",     "peak live",
                                               "live",        "temporary", "queue allocs"};

static void cell(FILE *out, enum column c, double v, bool estimated, const char *title)
{
    char text[CELL];
    bool bytes = c == COL_BYTES || c == COL_PEAK || c == COL_LIVE;
    unsigned long long n = (unsigned long long)(v + 0.5);
    fprintf(out, "<td class=\"num\" data-label=\"%s\" data-v=\"%llu\"", headers[c], n);
    if (title != NULL) {
        fputs(" title=\"", out);
        xml_escape(out, title);
        fputc('"', out);
    }
    fprintf(out, ">%s%s</td>", estimated ? "~" : "",
            bytes ? report_fmt_bytes(text, sizeof text, n)
                  : report_fmt_count(text, sizeof text, n));
}

/* "estimated from 12 samples; 99 % range 1,000-2,000" for an estimated site's figure. */
static const char *range_title(char *out, size_t size, const struct report_site *s, double low,
                               double high, bool bytes)
{
    if (!s->estimated)
        return NULL;
    char a[CELL], b[CELL], k[CELL];
    unsigned long long lo = (unsigned long long)(low + 0.5), hi = (unsigned long long)(high + 0.5);
    snprintf(out, size, "estimated from %s sample%s; 99 %% range %s-%s",
             report_fmt_count(k, sizeof k, s->allocs), s->allocs == 1 ? "" : "s",
             bytes ? report_fmt_bytes(a, sizeof a, lo) : report_fmt_count(a, sizeof a, lo),
             bytes ? report_fmt_bytes(b, sizeof b, hi) : report_fmt_count(b, sizeof b, hi));
    return out;
}

/* Which optional columns the table has: temporary allocations, queue allocations. */
struct shown_columns {
    bool temporary, queue;
};

static void site_row(FILE *out, const struct report *r, const struct report_site *s,
                     struct shown_columns shown, bool long_names)
{
    char where[1024], title[3 * CELL];
    const struct report_estimate *e = &s->est;
    fprintf(out, "<tr><td class=\"site\" data-v=\"%zu\">#%zu</td>", (size_t)(s - r->sites) + 1,
            (size_t)(s - r->sites) + 1);
    cell(out, COL_ALLOCS, e->allocs, s->estimated,
         range_title(title, sizeof title, s, e->allocs_low, e->allocs_high, false));
    cell(out, COL_BYTES, e->bytes, s->estimated,
         range_title(title, sizeof title, s, e->bytes_low, e->bytes_high, true));
    cell(out, COL_PEAK, e->peak_live_bytes, s->estimated, NULL);
    cell(out, COL_LIVE, e->live_bytes, s->estimated,
         range_title(title, sizeof title, s, e->live_low, e->live_high, true));
    if (shown.temporary)
        cell(out, COL_TEMPORARY, e->temporary, s->estimated, NULL);
    if (shown.queue)
        cell(out, COL_QUEUE, (double)s->queue_allocs, false, NULL);
    char full[4096];
    report_site_where(r, s, long_names, where, sizeof where);
    report_site_where(r, s, true, full, sizeof full);
    fputs("<td class=\"where\"", out);
    if (strcmp(where, full) != 0) { /* the full C++ names on hover */
        fputs(" title=\"", out);
        xml_escape(out, full);
        fputc('"', out);
    }
    fputc('>', out);
    xml_escape(out, where);
    fputs("</td></tr>\n", out);
}

static void header_row(FILE *out, struct shown_columns shown)
{
    fputs("<thead><tr><th data-sort=\"num\" title=\"the site's number in the stacks below\">"
          "site</th>",
          out);
    for (int c = 0; c < COL_COUNT; c++) {
        if ((c == COL_TEMPORARY && !shown.temporary) || (c == COL_QUEUE && !shown.queue))
            continue;
        fprintf(out, "<th data-sort=\"num\"%s>%s</th>",
                c == COL_ALLOCS ? " aria-sort=\"descending\"" : "", headers[c]);
    }
    fputs("<th data-sort=\"text\">where</th></tr></thead>\n", out);
}

/* Marks the top `top` sites of a ranking; returns how many sites it ranks. */
static size_t mark_top(const struct report *r, enum site_rank key, unsigned top,
                       const struct report_site **ranked, bool *wanted)
{
    size_t n = report_rank_sites(r, key, ranked);
    for (size_t i = 0; i < n && i < top; i++)
        wanted[ranked[i] - r->sites] = true;
    return n;
}

void report_html_site_table(FILE *out, const struct report *r, unsigned top, bool long_names)
{
    const struct report_site **ranked = calloc(r->site_count + 1, sizeof *ranked);
    bool *wanted = calloc(r->site_count + 1, sizeof *wanted);
    if (ranked == NULL || wanted == NULL) {
        free(ranked);
        free(wanted);
        return;
    }
    mark_top(r, RANK_BYTES, top, ranked, wanted);
    mark_top(r, RANK_PEAK, top, ranked, wanted);
    mark_top(r, RANK_LIVE, top, ranked, wanted);
    size_t n = mark_top(r, RANK_ALLOCS, top, ranked, wanted); /* the first order shown */
    size_t shown = 0;
    for (size_t i = 0; i < r->site_count; i++)
        shown += wanted[i];
    fprintf(out,
            "<p>The %zu site%s in the top %u by allocations, bytes, peak live or live bytes (of "
            "%zu). Click a column's header to sort by it: its top %u come first. '~': "
            "estimated from sampled stacks (hover for the range).</p>\n",
            shown, shown == 1 ? "" : "s", top, r->site_count, top);
    struct shown_columns columns = {!r->temporary_missing, report_queue_audit(r)};
    fputs("<div class=\"scroll\"><table class=\"sortable cards\" id=\"sites\">\n", out);
    header_row(out, columns);
    fputs("<tbody>\n", out);
    for (size_t i = 0; i < n; i++) /* by allocations first, then the rest in site order */
        if (wanted[ranked[i] - r->sites]) {
            site_row(out, r, ranked[i], columns, long_names);
            wanted[ranked[i] - r->sites] = false;
        }
    for (size_t i = 0; i < r->site_count; i++)
        if (wanted[i])
            site_row(out, r, &r->sites[i], columns, long_names);
    fputs("</tbody></table></div>\n", out);
    free(ranked);
    free(wanted);
}
