/* The HTML rendering: one self-contained page (inline CSS and SVG, no script, no network) that
 * is also well-formed XML, so tools can check it. */
#include <stdlib.h>
#include <string.h>

#include "document.h"
#include "probe/render.h"
#include "svg.h"

static const char style[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1f2328}"
    "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #d0d7de;padding-bottom:4px;"
    "margin-top:28px}h3{font-size:15px;margin-bottom:4px}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d0d7de;padding:3px 8px;"
    "text-align:left;vertical-align:top}th{background:#f6f8fa}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}pre{background:#f6f8fa;padding:8px;overflow-x:auto;"
    "font-size:12px}.verdict{padding:8px 12px;border-radius:6px;font-weight:600}"
    ".pass{background:#dafbe1;color:#116329}.fail{background:#ffebe9;color:#82071e}"
    ".na{background:#eaeef2;color:#424a53}"
    "svg text{font:11px system-ui,sans-serif;fill:#1f2328}.bar{fill:#0969da}"
    ".m0{fill:#b6e3ff;stroke:#0969da}.m1{fill:#ddf4ff;stroke:#0969da}"
    ".straddle{fill:#fff8c5;stroke:#d1242f;stroke-width:2}.hole{fill:url(#hatch);stroke:#d1242f}"
    ".padding{fill:#eaeef2;stroke:#8c959f}.line{fill:none;stroke:#d0d7de}"
    ".boundary{stroke:#8c959f;stroke-dasharray:4 3}";

static void print_table(FILE *out, const struct table *t)
{
    fputs("<table>\n", out);
    for (size_t r = 0; r < t->rows; r++) {
        fputs("<tr>", out);
        for (size_t c = 0; c < t->columns; c++) {
            const char *cell = t->cells[r * t->columns + c];
            const char *tag = r == 0 ? "th" : "td";
            fprintf(out, "<%s%s>", tag,
                    r > 0 && table_numeric_column(t, c) ? " class=\"num\"" : "");
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
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
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
    svg_layout(out, t, cacheline);
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

/* Green only when every check passed; n/a checks are counted, never called passed. */
static void print_verdict(FILE *out, const struct document *d)
{
    unsigned pass = d->checks[0], fail = d->checks[1], na = d->checks[2];
    if (fail > 0)
        fprintf(out, "<p class=\"verdict fail\">%u of %u checks failed: see Checks.", fail,
                pass + fail + na);
    else if (na == 0 && pass > 0)
        fprintf(out, "<p class=\"verdict pass\">Every check passed (%u).", pass);
    else if (pass == 0 && na > 0)
        fprintf(out, "<p class=\"verdict na\">No check could apply (%u n/a): see Checks.", na);
    else if (pass == 0)
        fprintf(out, "<p class=\"verdict na\">The dumps hold no checks.");
    else
        fprintf(out,
                "<p class=\"verdict na\">%u checks passed, %u could not apply (n/a): see "
                "Checks.",
                pass, na);
    fputs("</p>\n", out);
}

static void print_block(FILE *out, const struct document *d, const struct block *b)
{
    switch (b->kind) {
    case BLOCK_HEADING:
        fprintf(out, "<h%d id=\"", b->level);
        print_anchor(out, b->text);
        fputs("\">", out);
        xml_escape(out, b->text);
        fprintf(out, "</h%d>\n", b->level);
        if (b->level == 1)
            print_verdict(out, d);
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
        svg_bar_chart(out, &b->chart);
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
    }
}

void render_html(FILE *out, const struct document *d)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
          "<title>qaudit allocation report</title>\n<style>",
          out);
    fputs(style, out);
    fputs("</style>\n</head>\n<body>\n", out);
    /* The hatch of holes, defined once for every layout drawing on the page. */
    fputs("<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\">"
          "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fde2e1\"/>"
          "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#d1242f\" stroke-width=\"3\"/>"
          "</pattern></defs></svg>\n",
          out);
    for (size_t i = 0; i < d->count; i++)
        print_block(out, d, &d->blocks[i]);
    fputs("</body>\n</html>\n", out);
}
