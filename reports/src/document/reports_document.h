/* The document room of the reports library: a report as a sequence of blocks (headings,
 * paragraphs, tables, charts, stacks, lists, layouts), decided once by content/ and drawn by each
 * renderer of render/, which only decides how a block looks. It knows no renderer and no reading:
 * it uses base/ alone. Files: document.c. */
#ifndef REPORTS_ROOM_DOCUMENT_H
#define REPORTS_ROOM_DOCUMENT_H

#include <stdbool.h>
#include <stdio.h>

#include "../base/reports_base.h"
#include "probe/layout.h"
#include "reports/render.h"

enum block_kind {
    BLOCK_HEADING,
    BLOCK_PARAGRAPH,
    BLOCK_TABLE,
    BLOCK_CHART,
    BLOCK_LINES,
    BLOCK_LAYOUT,
    BLOCK_LIST /* items (lines) under a title (text): the summary on top */
};

/* How HTML colours a list it shows as the banner on top: the checks' verdict of a queue audit,
 * or neutral for what to look at first in any program. */
enum tone { TONE_NONE, TONE_INFO, TONE_PASS, TONE_FAIL };

/* What only the HTML page draws, from the report itself (render_html.c). */
enum html_view {
    VIEW_NONE,
    VIEW_SITES,   /* the flame graph and the one sortable site table */
    VIEW_TIMELINE /* memory over time of one process */
};

struct table {
    char **cells; /* rows * columns, row 0 is the header */
    size_t columns, rows;
    size_t cell_capacity; /* cells allocated (common/grow_array.h) */
};

/* A bar chart: in text bars of '#', in Markdown a table, in HTML an SVG. */
struct chart {
    char *unit; /* what the values count */
    char *axis; /* what the labels are (HTML names its category axis), or NULL */
    char **labels;
    double *values;
    size_t count;
    size_t label_capacity, value_capacity; /* allocated (common/grow_array.h) */
};

struct block {
    enum block_kind kind;
    int level;  /* heading level, 1 or 2 */
    char *text; /* heading, paragraph, chart title */
    struct table table;
    struct chart chart;
    char **lines; /* BLOCK_LINES: preformatted (stacks) */
    size_t line_count, line_capacity;
    const struct layout_type *layout;
    bool illustrates;    /* a chart drawing a table already shown: only HTML draws it */
    bool html_replaced;  /* HTML shows this block's content in a view of its own instead */
    enum html_view view; /* HTML draws this view after the block (text and Markdown: nothing) */
    size_t view_arg;     /* which one: a process's index for VIEW_TIMELINE */
    enum tone tone;      /* BLOCK_LIST: the banner's colour in HTML (TONE_NONE: a plain list) */
};

struct document {
    struct block *blocks;
    size_t count, capacity;
    unsigned cacheline;
    unsigned checks[3]; /* checks that passed, failed, could not apply (enum report_check_status) */
    const struct report *report; /* what the HTML views draw from */
    unsigned top;                /* sites per ranking */
    bool html_replacing; /* blocks added now are html_replaced (content_sites.c's rankings) */
    bool queue_audit;    /* report_queue_audit: queue sections, columns and checks shown */
    bool long_names;     /* C++ names in full (--long-names), else shortened (cxx_short_names.c) */
};

void report_doc_heading(struct document *d, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void report_doc_paragraph(struct document *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Starts a table with the given header cells (NULL-terminated); report_doc_row adds rows to it. */
void report_doc_table(struct document *d, const char *const *header);
void report_doc_row(struct document *d, const char *const *cells);
void report_doc_chart(struct document *d, const char *title, const char *unit, bool illustrates);
void report_doc_bar(struct document *d, const char *label, double value);
/* Names the last chart's category axis ("queue depth", "usable size (bytes)"). */
void report_doc_chart_axis(struct document *d, const char *axis);
/* The view HTML draws after the last block. */
void report_doc_html_view(struct document *d, enum html_view view, size_t arg);
void report_doc_lines(struct document *d);
void report_doc_line(struct document *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void report_doc_layout(struct document *d, const struct layout_type *layout);
/* A list under title; report_doc_item adds its items. */
void report_doc_list(struct document *d, enum tone tone, const char *title);
void report_doc_item(struct document *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void report_doc_free(struct document *d);

/* A column whose body cells all start with a digit (after "~", an estimate, and "+" or "-", a
 * change): renderers align it right. */
bool report_table_numeric_column(const struct table *t, size_t column);

#endif
