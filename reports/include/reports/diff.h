/* Two runs compared site by site (qaudit diff): what changed in allocations, bytes, live bytes
 * and temporary allocations between a base run and a new one, each read from one or more dumps.
 * Sites are matched by the functions of their frames (inlined ones included), not by address,
 * so two builds of a program compare; a frame without symbols is matched by module and offset. */
#ifndef REPORTS_DIFF_H
#define REPORTS_DIFF_H

#include <stdio.h>

#include "reports/render.h"
#include "reports/report.h"

enum diff_side { DIFF_BASE, DIFF_NEW };
enum diff_figure { DIFF_ALLOCS, DIFF_BYTES, DIFF_LIVE, DIFF_TEMPORARY, DIFF_FIGURES };
extern const char *const diff_figure_names[DIFF_FIGURES]; /* "allocs", "bytes", "live", ... */

/* One site as both runs saw it (summed over the sites of a run whose functions read the same). */
struct diff_site {
    const struct report_site *site[2]; /* the first matching site of each run, NULL: none there */
    double value[2][DIFF_FIGURES];     /* per run: allocations, bytes, live bytes, temporary */
    double live_blocks[2];
    bool estimated[2]; /* the run's figures are estimates (sampled stacks) */
    char *key;         /* what matched them: frames' functions, innermost first */
};

struct report_diff {
    const struct report *run[2];
    struct diff_site *sites; /* ranked: largest change of the sort figure first */
    size_t count;            /* sites present in either run */
    size_t changed;          /* of them, those whose figures differ */
    enum diff_figure sort;
};

/* Parses "allocs", "bytes", "live" or "temporary". */
bool diff_figure_parse(const char *name, enum diff_figure *out);

/* Matches base's and new's sites (both loaded, symbolized and folded) and ranks them by the
 * change of sort; false when memory ran out. */
bool report_diff(const struct report *base, const struct report *new_run, enum diff_figure sort,
                 struct report_diff *out);
void report_diff_free(struct report_diff *d);

/* Text, Markdown, JSON (qaudit-diff/1, docs/report-format.md) or HTML, top sites at most. */
void report_diff_render(FILE *out, const struct report_diff *d, enum report_format format,
                        unsigned top);

#endif
