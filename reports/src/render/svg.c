/* The SVG drawings of the HTML report. Every shape carries a <title> with its exact numbers, so
 * the page can be read by hovering, and the numbers are the ones the tables show. Drawings scale
 * with the page (viewBox, width 100 % in the style): charts have axes, units and a legend. */
#include "reports_render.h"

#include "common/xml_escape.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 400 user units: at a 400 px window (368 px of page) text of 11 px still shows at 10 px */
#define CHART_WIDTH 400
#define BAR_HEIGHT 18
#define BARS_SHOWN 15 /* beyond 16 bars, the 15 highest and the rest as one */
#define BYTE_WIDTH 12
#define ROW_HEIGHT 34
#define ROW_GAP 10
#define LEFT 64

double report_svg_nice_step(double max, int ticks)
{
    if (!(max > 0) || ticks < 1)
        return 1;
    double raw = max / ticks, magnitude = pow(10, floor(log10(raw)));
    double norm = raw / magnitude;
    return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * magnitude;
}

double report_svg_axis_end(double max, double step)
{
    double end = ceil(max / step - 1e-9) * step;
    return end > 0 ? end : step;
}

const char *report_svg_byte_unit(double max, double *per_unit)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    *per_unit = 1;
    while (u < 4 && max >= *per_unit * 1024) {
        *per_unit *= 1024;
        u++;
    }
    return units[u];
}

/* A tick's value, short: 2500 -> "2.5k", 3000000 -> "3M". */
static void tick_label(char *out, size_t size, double v)
{
    if (v >= 1e9)
        snprintf(out, size, "%gG", v / 1e9);
    else if (v >= 1e6)
        snprintf(out, size, "%gM", v / 1e6);
    else if (v >= 1e4)
        snprintf(out, size, "%gk", v / 1e3);
    else
        snprintf(out, size, "%g", v);
}

/* The bars drawn: every one, or past 16 the BARS_SHOWN highest in their order and the rest summed
 * into one ("other"). shown[i] says which; returns the rest's sum and counts it in *rest. */
static double choose_bars(const struct chart *c, bool *shown, size_t *rest)
{
    *rest = 0;
    for (size_t i = 0; i < c->count; i++)
        shown[i] = true;
    if (c->count <= BARS_SHOWN + 1)
        return 0;
    double sum = 0;
    for (size_t i = 0; i < c->count; i++) {
        size_t above = 0; /* bars higher than this one, or as high and earlier */
        for (size_t j = 0; j < c->count && above < BARS_SHOWN; j++)
            above += c->values[j] > c->values[i] || (c->values[j] == c->values[i] && j < i);
        shown[i] = above < BARS_SHOWN;
        if (!shown[i]) {
            sum += c->values[i];
            (*rest)++;
        }
    }
    return sum;
}

static void bar(FILE *out, const char *label, double value, double max, int y, int label_width,
                const char *unit, bool other)
{
    int space = CHART_WIDTH - label_width - 70;
    double w = max > 0 ? space * value / max : 0;
    if (w < 1 && value > 0)
        w = 1;
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"label\">", label_width - 6,
            y + 13);
    xml_escape(out, label);
    fprintf(out,
            "</text><rect class=\"bar%s\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\">"
            "<title>",
            other ? " other" : "", label_width, y, w, BAR_HEIGHT - 4);
    char text[64];
    if (value == floor(value) && value < 1e15)
        report_fmt_count(text, sizeof text, (unsigned long long)value);
    else
        snprintf(text, sizeof text, "%.2f", value);
    xml_escape(out, label);
    fprintf(out, ": %s %s</title></rect><text x=\"%.1f\" y=\"%d\" class=\"value\">%s</text>\n",
            text, unit, label_width + w + 4, y + 13, text);
}

static void value_axis(FILE *out, const struct chart *c, double end, double step, int label_width,
                       int top, int y)
{
    int space = CHART_WIDTH - label_width - 70;
    char text[32];
    for (double v = 0; v <= end + step / 2; v += step) {
        double x = label_width + space * v / end;
        tick_label(text, sizeof text, v);
        fprintf(out,
                "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/><text "
                "class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                x, top - 4, x, y + 4, x, y + 17, text);
    }
    fprintf(out,
            "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><line "
            "class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text "
            "class=\"axis-title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
            label_width, y, label_width + space, y, label_width, top - 4, label_width, y,
            label_width + space / 2, y + 34);
    xml_escape(out, c->unit);
    fputs("</text>\n", out);
}

/* The top line: the categories' axis named on the left (over the labels), the legend on the
 * right: what a bar counts, and the grey bar of the rest when there is one. When both do not fit
 * on one line the legend takes a second; returns the height used. */
static int chart_header(FILE *out, const struct chart *c, bool rest)
{
    int title = c->axis != NULL ? 7 * ((int)strlen(c->axis) + 2) + 8 : 0;
    int legend = 7 * (int)strlen(c->unit) + 18 + (rest ? 130 : 0) + 8;
    int y = title + legend > CHART_WIDTH ? 34 : 16;
    if (c->axis != NULL) {
        fputs("<text class=\"axis-title\" x=\"4\" y=\"16\">", out);
        xml_escape(out, c->axis);
        fputs(" \xe2\x86\x93</text>\n", out); /* a down arrow: the labels below */
    }
    int x = CHART_WIDTH - legend;
    fprintf(out,
            "<g class=\"legend\"><rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"12\" "
            "height=\"12\"/><text x=\"%d\" y=\"%d\">",
            x, y - 10, x + 18, y);
    xml_escape(out, c->unit);
    if (rest)
        fprintf(out,
                "</text><rect class=\"bar other\" x=\"%d\" y=\"%d\" width=\"12\" "
                "height=\"12\"/><text x=\"%d\" y=\"%d\">the rest, summed",
                CHART_WIDTH - 130, y - 10, CHART_WIDTH - 112, y);
    fputs("</text></g>\n", out);
    return y + 16;
}

/* A horizontal bar chart: the categories down the left with their axis named, the values along
 * a scale with ticks and its unit at the bottom, a legend on top. */
void report_svg_bar_chart(FILE *out, const struct chart *c)
{
    bool *shown = calloc(c->count + 1, sizeof *shown);
    if (shown == NULL)
        return;
    size_t rest;
    double rest_sum = choose_bars(c, shown, &rest), max = rest_sum;
    size_t label_chars = 7, bars = rest > 0;
    for (size_t i = 0; i < c->count; i++) {
        if (!shown[i])
            continue;
        bars++;
        max = c->values[i] > max ? c->values[i] : max;
        size_t n = strlen(c->labels[i]);
        label_chars = n > label_chars ? n : label_chars;
    }
    int label_width = (int)(label_chars > 24 ? 24 : label_chars) * 7 + 12;
    /* the header's height is known once drawn: the drawing goes in a group moved down by it */
    char *header = NULL;
    size_t header_size = 0;
    FILE *top = open_memstream(&header, &header_size);
    int first = top ? chart_header(top, c, rest > 0) : 32;
    if (top != NULL)
        fclose(top);
    int axis_y = first + (int)bars * BAR_HEIGHT;
    int height = axis_y + 44;
    double step = report_svg_nice_step(max, 5), end = report_svg_axis_end(max, step);
    fprintf(out,
            "<div class=\"chart-box\"><svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
            CHART_WIDTH, height, CHART_WIDTH, height);
    fputs(header ? header : "", out);
    free(header);
    value_axis(out, c, end, step, label_width, first, axis_y);
    int y = first;
    for (size_t i = 0; i < c->count; i++)
        if (shown[i]) {
            bar(out, c->labels[i], c->values[i], end, y, label_width, c->unit, false);
            y += BAR_HEIGHT;
        }
    if (rest > 0) {
        char label[64];
        snprintf(label, sizeof label, "other %zu", rest);
        bar(out, label, rest_sum, end, y, label_width, c->unit, true);
    }
    fputs("</svg></div>\n", out);
    free(shown);
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

void report_svg_layout(FILE *out, const struct layout_type *t, unsigned cacheline)
{
    uint64_t rows = t->size ? (t->size + cacheline - 1) / cacheline : 1;
    if (rows > 64)
        rows = 64; /* a 4 KiB struct is already a tall page; the text layout has the rest */
    int width = LEFT + (int)cacheline * BYTE_WIDTH + 8;
    int height = (int)rows * (ROW_HEIGHT + ROW_GAP) + 4;
    /* Drawn at its own size, never narrower (its 12 px text would shrink to 5 px at 400 px):
     * a narrow window scrolls it inside its box. */
    fprintf(out,
            "<div class=\"scroll\"><svg class=\"layout\" xmlns=\"http://www.w3.org/2000/svg\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "style=\"max-width:%dpx;min-width:%dpx\" role=\"img\">\n",
            width, height, width, height, width, width);
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
    fputs("</svg></div>\n", out);
}
