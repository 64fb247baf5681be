/* The top of the reports library: a report or a diff in the format asked for. JSON, pprof and
 * folded stacks are written from the report itself; text, Markdown and HTML from the document
 * that content.c (or content_diff.c) builds, which knows no renderer. */
#include <stdio.h>

#include "reports_render.h"
#include "reports/diff.h"
#include "reports/render.h"

void report_render_document(FILE *out, struct document *d, enum report_format format)
{
    if (format == REPORT_TEXT)
        report_render_text(out, d);
    else if (format == REPORT_MARKDOWN)
        report_render_markdown(out, d);
    else
        report_render_html(out, d);
    report_doc_free(d);
}

void report_render(FILE *out, const struct report *r, enum report_format format,
                   const struct report_options *options)
{
    if (format == REPORT_JSON) {
        report_render_json(out, r, options);
        return;
    }
    if (format == REPORT_PPROF) { /* render_pprof.c, render_folded.c */
        report_render_pprof(out, r, options->warn, options->pprof_allocs);
        return;
    }
    if (format == REPORT_FOLDED) {
        report_render_folded(out, r, options->weight);
        return;
    }
    struct document d = {0};
    report_build_document(&d, r, options);
    report_render_document(out, &d, format);
}

void report_diff_render(FILE *out, const struct report_diff *diff, enum report_format format,
                        unsigned top)
{
    if (format == REPORT_JSON) { /* every site, changed or not */
        report_diff_render_json(out, diff);
        return;
    }
    struct document d = {0};
    report_diff_document(&d, diff, top ? top : 20);
    report_render_document(out, &d, format);
}
