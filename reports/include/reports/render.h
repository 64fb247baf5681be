/* Rendering an allocation report: text for a terminal, Markdown for a pull request, JSON for
 * machines (qaudit-report/1, docs/report-format.md) and one self-contained HTML page with SVG
 * charts. All four show the same content, built once (content.c). Two exports give the sites to
 * other tools: a pprof heap profile and folded stacks (render_pprof.c, render_folded.c). */
#ifndef REPORTS_RENDER_H
#define REPORTS_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "probe/layout.h"
#include "reports/report.h"

enum report_format {
    REPORT_TEXT,
    REPORT_MARKDOWN,
    REPORT_JSON,
    REPORT_HTML,
    REPORT_PPROF,
    REPORT_FOLDED
};

/* What a stack weighs in the flame views (folded stacks): allocations, bytes allocated, or bytes
 * live at the dump; a sampled site's estimate of it. */
enum report_weight { WEIGHT_ALLOCS, WEIGHT_BYTES, WEIGHT_LIVE };

struct report_options {
    unsigned top;                             /* sites per ranking */
    unsigned cacheline;                       /* for the layouts */
    const struct layout_type *const *layouts; /* structs to show with their classes (may be 0) */
    size_t layout_count;
    const char *layout_source; /* where the layouts came from: a binary or a layout file */
    const char *layout_note;   /* why there are no layouts, or which structs could be shown */
    enum report_weight weight; /* folded: what each stack's count is */
    FILE *warn; /* pprof: a line for each module whose build id could not be read (NULL: none) */
    bool long_names;   /* text, Markdown, HTML: C++ names in full, not shortened (std::string,
                        * default template arguments dropped, long argument lists <...>) */
    bool pprof_allocs; /* pprof: alloc_space the default sample type (as Go's
                        * /debug/pprof/allocs serves it), not inuse_space (its /heap's) */
};

/* Numbers as every report writes them: 1234567 -> "1,234,567"; bytes -> "1.18 MiB", below
 * 10 KiB exact ("1,234 B"). */
const char *report_count_text(char *buf, size_t size, unsigned long long n);
const char *report_bytes_text(char *buf, size_t size, unsigned long long n);

/* Parses "text", "md", "json", "html", "pprof" or "folded"; false for anything else. */
bool report_format_parse(const char *name, enum report_format *out);

/* Parses "allocs", "bytes" or "live"; false for anything else. */
bool report_weight_parse(const char *name, enum report_weight *out);

/* pprof (REPORT_PPROF) is gzipped binary; folded (REPORT_FOLDED) one line per stack. */
void report_render(FILE *out, const struct report *r, enum report_format format,
                   const struct report_options *options);

/* The qaudit-report/1 document (a new reference). */
json_t *report_json(const struct report *r, const struct report_options *options);

#endif
