/* Rendering an allocation report: text for a terminal, Markdown for a pull request, JSON for
 * machines (qaudit-report/1, docs/report-format.md) and one self-contained HTML page with SVG
 * charts. All four show the same content, built once (content.c). */
#ifndef REPORTS_RENDER_H
#define REPORTS_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "probe/layout.h"
#include "reports/report.h"

enum report_format { REPORT_TEXT, REPORT_MARKDOWN, REPORT_JSON, REPORT_HTML };

struct report_options {
    unsigned top;                             /* sites per ranking */
    unsigned cacheline;                       /* for the layouts */
    const struct layout_type *const *layouts; /* structs to show with their classes (may be 0) */
    size_t layout_count;
    const char *layout_source; /* where the layouts came from: a binary or a layout file */
    const char *layout_note;   /* why there are no layouts, or which structs could be shown */
};

/* Parses "text", "md", "json" or "html"; false for anything else. */
bool report_format_parse(const char *name, enum report_format *out);

void report_render(FILE *out, const struct report *r, enum report_format format,
                   const struct report_options *options);

/* The qaudit-report/1 document (a new reference). */
json_t *report_json(const struct report *r, const struct report_options *options);

#endif
