/* The HTML rendering: one self-contained page (inline CSS, SVG and script, no network, no other
 * file) that is also well-formed XML, so tools can check it. Besides the document's blocks it
 * draws views of its own from the report: the run on top, one sortable site table and the flame
 * graph in place of the three rankings (on the first screen, right under what to look at first),
 * memory over time where it shows something. */
#include <stdlib.h>
#include <string.h>

#include "reports_render.h"
#include "probe/layout_render.h"
#include "common/xml_escape.h"

/* Tables scroll inside their box on a narrow page; one with a where column turns into cards
 * there (html_assets.c), each cell labelled with its header, where on top. */
static void print_table(FILE *out, const struct table *t)
{
    bool cards = false;
    for (size_t c = 0; c < t->columns; c++)
        cards = cards || strcmp(t->cells[c], "where") == 0;
    fprintf(out, "<div class=\"scroll\"><table%s>\n", cards ? " class=\"cards\"" : "");
    for (size_t r = 0; r < t->rows; r++) {
        fputs(r == 0 ? "<thead><tr>" : r == 1 ? "<tbody><tr>" : "<tr>", out);
        for (size_t c = 0; c < t->columns; c++) {
            const char *cell = t->cells[r * t->columns + c];
            const char *tag = r == 0 ? "th" : "td";
            bool where = strcmp(t->cells[c], "where") == 0;
            const char *cls = r == 0                              ? ""
                              : where                             ? " class=\"where\""
                              : cards && c == 0                   ? " class=\"site\""
                              : report_table_numeric_column(t, c) ? " class=\"num\""
                                                                  : "";
            fprintf(out, "<%s%s", tag, cls);
            if (r > 0 && cards && !where && c > 0) {
                fputs(" data-label=\"", out);
                xml_escape(out, t->cells[c]);
                fputc('"', out);
            }
            fputc('>', out);
            if (r > 0 && (strcmp(cell, "PASS") == 0 || strcmp(cell, "FAIL") == 0 ||
                          strcmp(cell, "N/A") == 0))
                fprintf(out, "<span class=\"verdict %s\">%s</span>",
                        cell[0] == 'P'   ? "pass"
                        : cell[0] == 'F' ? "fail"
                                         : "na",
                        cell);
            else
                xml_escape(out, cell);
            fprintf(out, "</%s>", tag);
        }
        fputs(r == 0 ? "</tr></thead>\n" : "</tr>\n", out);
    }
    fputs(t->rows > 1 ? "</tbody></table></div>\n" : "</table></div>\n", out);
}

/* "Struct layouts" -> "struct-layouts": a link target for each section. */
static void print_anchor(FILE *out, const char *text)
{
    for (const char *p = text; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
            fputc(*p, out);
        else if (*p >= 'A' && *p <= 'Z')
            fputc(*p - 'A' + 'a', out);
        else if (*p == ' ' || *p == '-')
            fputc('-', out);
    }
}

static void print_layout(FILE *out, const struct layout_type *t, unsigned cacheline)
{
    report_svg_layout(out, t, cacheline);
    char *text = NULL;
    size_t size = 0;
    FILE *memory = open_memstream(&text, &size);
    if (memory == NULL)
        return;
    layout_print_text(memory, t, cacheline);
    fclose(memory);
    fputs("<details><summary>as text</summary><pre>", out);
    xml_escape(out, text);
    fputs("</pre></details>\n", out);
    free(text);
}

static void print_list(FILE *out, const struct block *b)
{
    static const char *const tones[] = {"", "info", "pass", "fail"};
    if (b->tone != TONE_NONE)
        fprintf(out, "<div class=\"verdict %s\" id=\"summary\"><p>", tones[b->tone]);
    else
        fputs("<p>", out);
    xml_escape(out, b->text);
    fputs(b->tone != TONE_NONE ? ":</p><ul>" : ":</p>\n<ul>", out);
    for (size_t l = 0; l < b->line_count; l++) {
        fputs("<li>", out);
        xml_escape(out, b->lines[l]);
        fputs("</li>", out);
    }
    fputs(b->tone != TONE_NONE ? "</ul></div>\n" : "</ul>\n", out);
}

/* The banner under the title: the document's summary (what to look at first), in the colour of
 * its verdict: green only when every check of a queue audit passed, red when one failed. */
static void print_banner(FILE *out, const struct document *d)
{
    for (size_t i = 0; i < d->count; i++)
        if (d->blocks[i].kind == BLOCK_LIST && d->blocks[i].tone != TONE_NONE) {
            print_list(out, &d->blocks[i]);
            return;
        }
}

/* Memory over time of the first TIMELINES_DRAWN processes whose chart shows something (a
 * fork-heavy program has hundreds; a chart of two points is an empty frame, timeline_gaps.c):
 * the text above the charts gives every process's peak and why a chart is missing. */
#define TIMELINES_DRAWN 8

static void print_timeline(FILE *out, const struct report *r, size_t process)
{
    size_t before = 0;
    for (size_t i = 0; i < process; i++)
        before += report_timeline_drawable(&r->processes[i]);
    if (before < TIMELINES_DRAWN)
        report_html_timeline(out, &r->processes[process]);
    else if (before == TIMELINES_DRAWN)
        fprintf(out,
                "<p class=\"note\">Charts for the first %d processes only; the lines above "
                "give each process's highest points.</p>\n",
                TIMELINES_DRAWN);
}

/* The top sites, table first (each site's where in it), then the flame graph. */
static void print_view(FILE *out, const struct document *d, const struct block *b)
{
    const struct report *r = d->report;
    if (r == NULL)
        return;
    if (b->view == VIEW_SITES) {
        fputs("<h3 id=\"site-table\">Sites</h3>\n", out);
        report_html_site_table(out, r, d->top ? d->top : 10, d->long_names);
        fputs("<h3 id=\"flame-graph\">Flame graph</h3>\n", out);
        report_html_flame(out, r, d->long_names);
    } else if (b->view == VIEW_TIMELINE && b->view_arg < r->process_count) {
        print_timeline(out, r, b->view_arg);
    }
}

static void print_block(FILE *out, const struct document *d, const struct block *b);

/* The block the top sites hang from (their section's heading), drawn on the first screen; NULL
 * without sites. */
static const struct block *sites_on_top(const struct document *d)
{
    for (size_t i = 0; i < d->count; i++)
        if (d->blocks[i].view == VIEW_SITES)
            return &d->blocks[i];
    return NULL;
}

/* The first screen: the title, what the run was (a few lines), what to look at first and right
 * under it the top sites with their where and the flame graph; the rest of the document follows
 * in its order. */
static void print_top(FILE *out, const struct document *d, const struct block *title)
{
    fprintf(out, "<h1 id=\"");
    print_anchor(out, title->text);
    fputs("\">", out);
    xml_escape(out, title->text);
    fputs("</h1>\n", out);
    report_html_metadata(out, d->report);
    print_banner(out, d);
    const struct block *sites = sites_on_top(d);
    if (sites != NULL)
        print_block(out, d, sites);
}

static void print_block(FILE *out, const struct document *d, const struct block *b)
{
    if (b->html_replaced)
        return;
    switch (b->kind) {
    case BLOCK_HEADING:
        if (b->level == 1) {
            print_top(out, d, b);
            break;
        }
        fprintf(out, "<h%d id=\"", b->level);
        print_anchor(out, b->text);
        fputs("\">", out);
        xml_escape(out, b->text);
        fprintf(out, "</h%d>\n", b->level);
        break;
    case BLOCK_PARAGRAPH:
        fputs("<p>", out);
        xml_escape(out, b->text);
        fputs("</p>\n", out);
        break;
    case BLOCK_TABLE:
        print_table(out, &b->table);
        break;
    case BLOCK_CHART:
        if (b->chart.count == 0)
            break;
        fputs("<h3>", out);
        xml_escape(out, b->text);
        fputs("</h3>\n", out);
        report_svg_bar_chart(out, &b->chart);
        break;
    case BLOCK_LINES:
        fputs("<pre>", out);
        for (size_t l = 0; l < b->line_count; l++) {
            xml_escape(out, b->lines[l]);
            fputc('\n', out);
        }
        fputs("</pre>\n", out);
        break;
    case BLOCK_LAYOUT:
        print_layout(out, b->layout, d->cacheline);
        break;
    case BLOCK_LIST:
        if (b->tone == TONE_NONE) /* the banner was drawn under the title */
            print_list(out, b);
        break;
    }
    print_view(out, d, b);
}

void report_render_html(FILE *out, const struct document *d)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
          "<title>qaudit allocation report</title>\n<style>\n",
          out);
    fputs(report_html_style, out);
    fputs("</style>\n</head>\n<body>\n", out);
    /* The hatch of holes, defined once for every layout drawing on the page. */
    fputs("<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\">"
          "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fde2e1\"/>"
          "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#d1242f\" stroke-width=\"3\"/>"
          "</pattern></defs></svg>\n",
          out);
    const struct block *sites = sites_on_top(d);
    bool top_printed = false;
    for (size_t i = 0; i < d->count; i++) {
        const struct block *b = &d->blocks[i];
        top_printed = top_printed || (b->kind == BLOCK_HEADING && b->level == 1);
        if (b == sites && top_printed) /* drawn on top; its stacks stay here */
            fputs("<h2 id=\"site-stacks\">Stacks of the top sites</h2>\n", out);
        else
            print_block(out, d, b);
    }
    /* In CDATA for XML tools; "//" hides its markers from the script. */
    fputs("<script>//<![CDATA[\n", out);
    fputs(report_html_script, out);
    fputs("//]]></script>\n</body>\n</html>\n", out);
}
