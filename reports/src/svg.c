/* The SVG drawings of the HTML report. Every shape carries a <title> with its exact numbers, so
 * the page can be read by hovering, and the numbers are the ones the tables show. */
#include "svg.h"

#include "probe/render.h"

#include <inttypes.h>
#include <string.h>

#define CHART_WIDTH 760
#define BAR_HEIGHT 18
#define BYTE_WIDTH 12
#define ROW_HEIGHT 34
#define ROW_GAP 10
#define LEFT 64

void svg_bar_chart(FILE *out, const struct chart *c)
{
    double max = 0;
    size_t label_chars = 4;
    for (size_t i = 0; i < c->count; i++) {
        max = c->values[i] > max ? c->values[i] : max;
        size_t n = strlen(c->labels[i]);
        label_chars = n > label_chars ? n : label_chars;
    }
    int label_width = (int)(label_chars > 30 ? 30 : label_chars) * 7 + 10;
    int bar_space = CHART_WIDTH - label_width - 90;
    int height = (int)c->count * BAR_HEIGHT + 8;
    fprintf(out,
            "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
            CHART_WIDTH, height, CHART_WIDTH, height);
    for (size_t i = 0; i < c->count; i++) {
        int y = (int)i * BAR_HEIGHT + 4;
        int w = max > 0 ? (int)(bar_space * c->values[i] / max + 0.5) : 0;
        if (w == 0 && c->values[i] > 0)
            w = 1;
        fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"label\">",
                label_width - 6, y + 13);
        xml_escape(out, c->labels[i]);
        fprintf(out,
                "</text><rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\">"
                "<title>",
                label_width, y, w, BAR_HEIGHT - 4);
        xml_escape(out, c->labels[i]);
        fprintf(out, ": %g %s</title></rect>", c->values[i], c->unit);
        fprintf(out, "<text x=\"%d\" y=\"%d\" class=\"value\">%g</text>\n", label_width + w + 4,
                y + 13, c->values[i]);
    }
    fputs("</svg>\n", out);
}

/* A span of bits [from, to) drawn across as many cache-line rows as it covers. */
static void draw_span(FILE *out, uint64_t from, uint64_t to, unsigned cacheline, const char *cls,
                      const char *label, const char *tooltip)
{
    uint64_t line_bits = (uint64_t)cacheline * 8;
    while (from < to) {
        uint64_t row = from / line_bits, row_end = (row + 1) * line_bits;
        uint64_t end = to < row_end ? to : row_end;
        double x = LEFT + (double)(from - row * line_bits) * BYTE_WIDTH / 8;
        double w = (double)(end - from) * BYTE_WIDTH / 8;
        int y = (int)row * (ROW_HEIGHT + ROW_GAP) + 4;
        fprintf(out,
                "<g><rect class=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"/>"
                "<title>",
                cls, x, y, w, ROW_HEIGHT);
        xml_escape(out, tooltip);
        fputs("</title>", out);
        size_t fits = w > 8 ? (size_t)((w - 4) / 6.6) : 0;
        if (label != NULL && fits > 0) {
            fprintf(out, "<text class=\"member\" x=\"%.1f\" y=\"%d\">", x + 3, y + 21);
            char cut[128];
            snprintf(cut, sizeof cut, "%.*s", (int)(fits < sizeof cut - 1 ? fits : sizeof cut - 1),
                     label);
            xml_escape(out, cut);
            fputs("</text>", out);
        }
        fputs("</g>\n", out);
        from = end;
    }
}

static uint64_t member_start(const struct layout_member *m)
{
    return m->bit_offset >= 0 ? (uint64_t)m->bit_offset : m->offset * 8;
}

static uint64_t member_end(const struct layout_member *m)
{
    return m->bit_offset >= 0 ? (uint64_t)m->bit_offset + m->bit_size : (m->offset + m->size) * 8;
}

static void draw_members(FILE *out, const struct layout_type *t, unsigned cacheline)
{
    char tip[512];
    if (t->kind[0] == 'u') {
        snprintf(tip, sizeof tip, "union of %zu members, %" PRIu64 " bytes", t->member_count,
                 t->size);
        draw_span(out, 0, t->size * 8, cacheline, "m0", "union", tip);
        return;
    }
    size_t shown = 0;
    for (size_t i = 0; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        if (m->depth != 0)
            continue;
        uint64_t from = member_start(m), to = member_end(m);
        bool straddles = m->bit_offset < 0 && m->size > 0 &&
                         m->offset / cacheline != (m->offset + m->size - 1) / cacheline;
        snprintf(tip, sizeof tip, "%s %s: offset %" PRIu64 ", size %" PRIu64 "%s", m->type,
                 m->name[0] ? m->name : "(anonymous)", m->offset, m->size,
                 straddles ? ", straddles a cache line" : "");
        const char *cls = straddles ? "straddle" : (shown++ % 2 ? "m1" : "m0");
        draw_span(out, from, to, cacheline, cls, m->name[0] ? m->name : m->type, tip);
    }
    for (size_t h = 0; h < t->hole_count; h++) {
        const struct layout_hole *hole = &t->holes[h];
        uint64_t from = member_end(&t->members[hole->after_member]);
        snprintf(tip, sizeof tip, "hole: %" PRIu64 " %s after %s",
                 hole->bits % 8 ? hole->bits : hole->bits / 8, hole->bits % 8 ? "bits" : "bytes",
                 t->members[hole->after_member].name);
        draw_span(out, from, from + hole->bits, cacheline, "hole", NULL, tip);
    }
    if (t->padding > 0) {
        snprintf(tip, sizeof tip, "tail padding: %" PRIu64 " bytes", t->padding);
        draw_span(out, (t->size - t->padding) * 8, t->size * 8, cacheline, "padding", NULL, tip);
    }
}

void svg_layout(FILE *out, const struct layout_type *t, unsigned cacheline)
{
    uint64_t rows = t->size ? (t->size + cacheline - 1) / cacheline : 1;
    if (rows > 64)
        rows = 64; /* a 4 KiB struct is already a tall page; the text layout has the rest */
    int width = LEFT + (int)cacheline * BYTE_WIDTH + 8;
    int height = (int)rows * (ROW_HEIGHT + ROW_GAP) + 4;
    fprintf(out,
            "<svg class=\"layout\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
            width, height, width, height);
    for (uint64_t r = 0; r < rows; r++) {
        int y = (int)r * (ROW_HEIGHT + ROW_GAP) + 4;
        uint64_t bytes = t->size - r * cacheline < cacheline ? t->size - r * cacheline : cacheline;
        fprintf(out,
                "<text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"end\">line %" PRIu64
                "</text><text class=\"label\" x=\"%d\" y=\"%d\" text-anchor=\"end\">@%" PRIu64
                "</text><rect class=\"line\" x=\"%d\" y=\"%d\" width=\"%" PRIu64
                "\" height=\"%d\"/>\n",
                LEFT - 6, y + 14, r, LEFT - 6, y + 28, r * cacheline, LEFT, y, bytes * BYTE_WIDTH,
                ROW_HEIGHT);
    }
    draw_members(out, t, cacheline);
    for (uint64_t r = 1; r < rows; r++) {
        int y = (int)r * (ROW_HEIGHT + ROW_GAP) - ROW_GAP / 2 + 4;
        fprintf(out, "<line class=\"boundary\" x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", y,
                width, y);
    }
    fputs("</svg>\n", out);
}
