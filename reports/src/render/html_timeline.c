/* Memory over time of one process as an SVG: live heap bytes and the resident set against seconds
 * from the process's start, each in a panel with its own scale (a resident set of megabytes would
 * flatten a heap of kilobytes on a shared one), the dumps (snapshots and the last) as dashed
 * verticals, each line's highest point marked; axes with their units, and a legend. */
#include <inttypes.h>

#include "reports_render.h"

#define WIDTH 400 /* as the bar charts: legible at a 400 px window (svg.c) */
#define LEFT 64
#define RIGHT (WIDTH - 16)
#define FIRST_TOP 54     /* under the legend's two lines */
#define PANEL_GAP 20     /* between the two panels */
#define PANELS 220       /* their height together, gap included */
#define X_AXIS 48        /* under the last panel: ticks and the axis' title */
#define LINE_POINTS 1200 /* drawn at most, per line */

/* The x scale (seconds) every panel shares. */
struct time_scale {
    double end, step;
};

/* One panel: a line's values between top and bottom, in a binary unit. */
struct panel {
    bool rss;
    int top, bottom;
    double end, step, per_unit; /* end and step in units */
    const char *unit;
};

static double px(const struct time_scale *t, double seconds)
{
    return LEFT + (RIGHT - LEFT) * (seconds / t->end);
}

static double py(const struct panel *p, double bytes)
{
    return p->bottom - (p->bottom - p->top) * (bytes / p->per_unit / p->end);
}

static uint64_t value(const struct report_point *q, bool rss)
{
    return rss ? q->rss_bytes : q->live_bytes;
}

static struct time_scale time_scale_of(const struct report_process *p)
{
    double last = report_seconds_since_start(p, p->timeline[p->timeline_count - 1].time_ns);
    for (size_t i = 0; i < p->dump_time_count; i++) {
        double t = report_seconds_since_start(p, p->dump_times[i]);
        last = t > last ? t : last;
    }
    struct time_scale t = {0, report_svg_nice_step(last, 6)};
    t.end = report_svg_axis_end(last, t.step);
    return t;
}

static struct panel panel_of(const struct report_process *p, bool rss, int top, int bottom)
{
    struct panel q = {rss, top, bottom, 0, 0, 1, NULL};
    double highest = (double)value(&p->timeline[report_timeline_peak(p, rss)], rss);
    q.unit = report_svg_byte_unit(highest, &q.per_unit);
    q.step = report_svg_nice_step(highest / q.per_unit, 4);
    q.end = report_svg_axis_end(highest / q.per_unit, q.step);
    return q;
}

static void time_axis(FILE *out, const struct time_scale *t, int top, int bottom)
{
    for (double s = 0; s <= t->end + t->step / 2; s += t->step)
        fprintf(out,
                "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/><text "
                "class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
                px(t, s), top, px(t, s), bottom + 5, px(t, s), bottom + 18, s);
    fprintf(out,
            "<text class=\"axis-title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">seconds since "
            "the process started</text>\n",
            (LEFT + RIGHT) / 2, bottom + 38);
}

static void value_axis(FILE *out, const struct panel *p)
{
    for (double v = 0; v <= p->end + p->step / 2; v += p->step) {
        double y = py(p, v * p->per_unit);
        fprintf(out,
                "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/><text "
                "class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                LEFT, y, RIGHT, y, LEFT - 6, y + 4, v);
    }
    fprintf(out,
            "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><line class=\"axis\" "
            "x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/><text class=\"axis-title\" "
            "transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">%s (%s)</text>\n",
            LEFT, p->bottom, RIGHT, p->bottom, LEFT, p->top, LEFT, p->bottom,
            (p->top + p->bottom) / 2, p->rss ? "RSS" : "live heap", p->unit);
}

/* The lines on the first row, the dumps and the peak on the second: one row would not fit. */
static void legend(FILE *out, bool rss)
{
    fprintf(out,
            "<g class=\"legend\"><line class=\"live\" x1=\"%d\" y1=\"14\" x2=\"%d\" y2=\"14\"/>"
            "<text x=\"%d\" y=\"18\">live heap bytes</text>",
            LEFT, LEFT + 24, LEFT + 30);
    if (rss)
        fprintf(out,
                "<line class=\"rss\" x1=\"%d\" y1=\"14\" x2=\"%d\" y2=\"14\"/><text x=\"%d\" "
                "y=\"18\">resident set (RSS)</text>",
                LEFT + 150, LEFT + 174, LEFT + 180);
    fprintf(out,
            "<line class=\"dump\" x1=\"%d\" y1=\"26\" x2=\"%d\" y2=\"40\"/><text x=\"%d\" "
            "y=\"37\">dump</text><circle class=\"peak\" cx=\"%d\" cy=\"33\" r=\"4\"/><text "
            "x=\"%d\" y=\"37\">highest point</text></g>\n",
            LEFT + 12, LEFT + 12, LEFT + 30, LEFT + 162, LEFT + 180);
}

static void vertex(FILE *out, const struct report_process *p, const struct time_scale *t,
                   const struct panel *q, size_t i, bool first)
{
    const struct report_point *r = &p->timeline[i];
    fprintf(out, "%s%.1f,%.1f", first ? "" : " ", px(t, report_seconds_since_start(p, r->time_ns)),
            py(q, (double)value(r, q->rss)));
}

/* The line through the points; past LINE_POINTS of them (many snapshots merged), the lowest and
 * the highest of each of LINE_POINTS / 2 runs of points, in their order: the page stays small and
 * no peak or dip is smoothed away. */
static void line(FILE *out, const struct report_process *p, const struct time_scale *t,
                 const struct panel *q)
{
    fprintf(out, "<polyline class=\"%s\" points=\"", q->rss ? "rss" : "live");
    size_t n = p->timeline_count, runs = n > LINE_POINTS ? LINE_POINTS / 2 : n;
    for (size_t k = 0; k < runs; k++) {
        size_t from = k * n / runs, to = (k + 1) * n / runs, low = from, high = from;
        for (size_t i = from; i < to; i++) {
            low = value(&p->timeline[i], q->rss) < value(&p->timeline[low], q->rss) ? i : low;
            high = value(&p->timeline[i], q->rss) > value(&p->timeline[high], q->rss) ? i : high;
        }
        vertex(out, p, t, q, low < high ? low : high, k == 0);
        if (low != high)
            vertex(out, p, t, q, low < high ? high : low, false);
    }
    fputs("\"/>\n", out);
}

static void dumps(FILE *out, const struct report_process *p, const struct time_scale *t,
                  const struct panel *q)
{
    for (size_t i = 0; i < p->dump_time_count; i++) {
        double s = report_seconds_since_start(p, p->dump_times[i]);
        fprintf(out,
                "<line class=\"dump\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"><title>%s at "
                "%.3f s</title></line>\n",
                px(t, s), q->top, px(t, s), q->bottom,
                i + 1 == p->dump_time_count && p->final ? "the last dump" : "a dump (snapshot)", s);
    }
}

static void peak(FILE *out, const struct report_process *p, const struct time_scale *t,
                 const struct panel *q)
{
    const struct report_point *r = &p->timeline[report_timeline_peak(p, q->rss)];
    double s = report_seconds_since_start(p, r->time_ns), x = px(t, s);
    double y = py(q, (double)value(r, q->rss));
    bool right = x > (LEFT + RIGHT) / 2;
    char bytes[CELL];
    report_fmt_bytes(bytes, sizeof bytes, value(r, q->rss));
    fprintf(out,
            "<circle class=\"peak\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>%s highest: %s at "
            "%.3f s</title></circle><text class=\"peak-label\" x=\"%.1f\" y=\"%.1f\" "
            "text-anchor=\"%s\">%s at %.2f s</text>\n",
            x, y, q->rss ? "resident set" : "live heap bytes", bytes, s, x + (right ? -8 : 8),
            y < q->top + 14 ? y + 14 : y - 6, right ? "end" : "start", bytes, s);
}

static void draw_panel(FILE *out, const struct report_process *p, const struct time_scale *t,
                       const struct panel *q)
{
    value_axis(out, q);
    dumps(out, p, t, q);
    line(out, p, t, q);
    peak(out, p, t, q);
}

void report_html_timeline(FILE *out, const struct report_process *p)
{
    if (p->timeline_count == 0)
        return;
    bool rss = p->timeline[report_timeline_peak(p, true)].rss_bytes > 0;
    struct time_scale t = time_scale_of(p);
    int half = (PANELS - PANEL_GAP) / 2, bottom = FIRST_TOP + PANELS;
    struct panel live = panel_of(p, false, FIRST_TOP, rss ? FIRST_TOP + half : bottom);
    struct panel resident = panel_of(p, true, bottom - half, bottom);
    int height = bottom + X_AXIS;
    fprintf(out,
            "<div class=\"chart-box\"><svg class=\"chart timeline\" "
            "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" "
            "height=\"%d\" role=\"img\" aria-label=\"memory over time of pid %" PRIu64 "\">\n",
            WIDTH, height, WIDTH, height, p->pid);
    legend(out, rss);
    time_axis(out, &t, FIRST_TOP, bottom);
    draw_panel(out, p, &t, &live);
    if (rss)
        draw_panel(out, p, &t, &resident);
    fputs("</svg></div>\n", out);
}
