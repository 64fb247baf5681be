/* The HTML page's own views (issue 15): the flame graph's frames are the folded stacks' frames
 * with the same figures, estimates flagged, the smallest frames left out past the node budget;
 * one sortable site table instead of the three rankings; a responsive, self-contained page; the
 * size histogram's rest grouped; memory over time merged over a process's snapshots (kept apart
 * per process), drawn with its dumps and peak, and told in one line of text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/reports_render.h"
#include "report_fixture.h"

/* ---- a report built by hand (report_fixture.c) ---- */

/* parse (xmalloc inlined into it: folded) called from main at two lines, a site without a stack,
 * a sampled site in inner (inlined) under parse, a frame without symbols. */
static struct report *example_report(void)
{
    struct report *r = hand_report(5);
    struct report_frame a[] = {hand_frame(0, 0x10, "xmalloc", "parse", 9),
                               hand_frame(0, 0x20, NULL, "main", 20),
                               hand_frame(1, 0x30, NULL, NULL, 0)};
    hand_site(r, a, 3, 3, 300, 100, false);
    struct report_frame b[] = {hand_frame(0, 0x11, "xmalloc", "parse", 9),
                               hand_frame(0, 0x21, NULL, "main", 21),
                               hand_frame(1, 0x30, NULL, NULL, 0)};
    hand_site(r, b, 3, 2, 50, 0, false);
    hand_site(r, NULL, 0, 1, 8, 0, false);
    struct report_frame d[] = {hand_frame(0, 0x40, "inner", "parse", 9),
                               hand_frame(0, 0x50, NULL, "main", 22),
                               hand_frame(1, 0x30, NULL, NULL, 0)};
    hand_site(r, d, 3, 40, 4000, 400, true);
    return r;
}

/* ---- the flame graph's data in the page ---- */

struct flame {
    json_t *doc, *nodes, *names, *locs;
    size_t count;
};

static struct flame flame_of(const char *html)
{
    const char *open = "<script type=\"application/json\" id=\"flame-data\">";
    const char *start = strstr(html, open);
    assert_non_null(start);
    start += strlen(open);
    const char *end = strstr(start, "</script>");
    assert_non_null(end);
    json_error_t e;
    struct flame f = {0};
    f.doc = json_loadb(start, (size_t)(end - start), 0, &e);
    if (f.doc == NULL)
        fail_msg("flame data is not JSON: %s", e.text);
    f.nodes = json_object_get(f.doc, "nodes");
    f.names = json_object_get(f.doc, "names");
    f.locs = json_object_get(f.doc, "locs");
    assert_int_equal(json_array_size(f.nodes) % 7, 0);
    f.count = json_array_size(f.nodes) / 7;
    return f;
}

static long long field(const struct flame *f, size_t node, int k)
{
    return json_integer_value(json_array_get(f->nodes, node * 7 + (size_t)k));
}

/* Each node's path from the root, its names joined by ';' as folded stacks join them. */
static char **paths_of(const struct flame *f)
{
    char **paths = calloc(f->count, sizeof *paths);
    size_t *at_depth = calloc(f->count + 1, sizeof *at_depth);
    for (size_t i = 1; i < f->count; i++) {
        size_t depth = (size_t)field(f, i, 0);
        const char *name = json_string_value(json_array_get(f->names, (size_t)field(f, i, 1)));
        at_depth[depth] = i;
        if (depth == 1)
            paths[i] = strdup(name);
        else if (asprintf(&paths[i], "%s;%s", paths[at_depth[depth - 1]], name) < 0)
            paths[i] = NULL;
    }
    free(at_depth);
    return paths;
}

/* The sum of the folded lines' counts whose stack is path or starts with path and a ';'. */
static long long folded_under(const char *folded, const char *path)
{
    long long sum = 0;
    size_t n = strlen(path);
    for (const char *line = folded; *line;) {
        const char *end = strchr(line, '\n'), *space = line;
        for (const char *s = line; s < end; s++)
            if (*s == ' ')
                space = s;
        if (strncmp(line, path, n) == 0 && (line[n] == ' ' || line[n] == ';'))
            sum += atoll(space + 1);
        line = end + 1;
    }
    return sum;
}

static void flame_frames_are_the_folded_stacks_frames(void **state)
{
    (void)state;
    struct report *r = example_report();
    char *html = render(r, REPORT_HTML), *folded = render(r, REPORT_FOLDED);
    struct flame f = flame_of(html);
    char **paths = paths_of(&f);
    assert_int_equal(field(&f, 0, 4), 3 + 2 + 1 + 40); /* the root: every site's allocations */
    for (size_t i = 1; i < f.count; i++) {
        if (folded_under(folded, paths[i]) != field(&f, i, 4))
            fail_msg("%s: %lld allocations in the flame graph, %lld in folded stacks", paths[i],
                     field(&f, i, 4), folded_under(folded, paths[i]));
        assert_null(strstr(paths[i], "xmalloc")); /* the wrapper is folded in both */
        free(paths[i]);
    }
    assert_int_equal(f.count, 1 + 5); /* all, libc.so.6+0x30, main, parse, inner, (no stack) */
    free(paths);
    json_decref(f.doc);
    free(html);
    free(folded);
    hand_report_free(r);
}

static size_t node_named(const struct flame *f, const char *name)
{
    for (size_t i = 0; i < f->count; i++)
        if (strcmp(json_string_value(json_array_get(f->names, (size_t)field(f, i, 1))), name) == 0)
            return i;
    fail_msg("no frame named %s", name);
    return 0;
}

static const char *loc_of(const struct flame *f, size_t node)
{
    long long loc = field(f, node, 2);
    return loc < 0 ? "" : json_string_value(json_array_get(f->locs, (size_t)loc));
}

/* Figures per weight, file:line, several lines flagged, inlined and estimates flagged. */
static void flame_nodes_carry_their_figures_and_lines(void **state)
{
    (void)state;
    struct report *r = example_report();
    char *html = render(r, REPORT_HTML);
    struct flame f = flame_of(html);
    size_t main = node_named(&f, "main"), inner = node_named(&f, "inner");
    size_t parse = node_named(&f, "parse");
    assert_int_equal(field(&f, main, 5), 300 + 50 + 4000); /* bytes */
    assert_int_equal(field(&f, main, 6), 100 + 400);       /* live */
    assert_string_equal(loc_of(&f, main), "a.c:20");
    assert_true(field(&f, main, 3) & 2); /* called from lines 20, 21 and 22 */
    assert_false(field(&f, parse, 3) & 2);
    assert_string_equal(loc_of(&f, inner), "a.c:3");
    assert_true(field(&f, inner, 3) & 4); /* inlined */
    assert_true(field(&f, inner, 3) & 1); /* an estimate */
    assert_true(field(&f, main, 3) & 1);  /* holds one */
    assert_true(field(&f, 0, 3) & 1);
    assert_false(field(&f, node_named(&f, "(no stack)"), 3) & 1);
    assert_string_equal(loc_of(&f, node_named(&f, "libc.so.6+0x30")), "");
    json_decref(f.doc);
    free(html);
    hand_report_free(r);
}

/* Past HTML_FLAME_NODES the smallest go (in every weight) and the page says how many. */
static void flame_keeps_the_largest_nodes(void **state)
{
    (void)state;
    size_t sites = HTML_FLAME_NODES + 5000;
    struct report *r = hand_report(sites);
    for (size_t i = 0; i < sites; i++) {
        struct report_frame one = {0, 0x1000 + i, NULL, 0};
        hand_site(r, &one, 1, (double)(i + 1), 8.0 * (double)(i + 1), i == 7 ? 1e9 : 0, false);
    }
    char *html = render(r, REPORT_HTML);
    struct flame f = flame_of(html);
    assert_int_equal(f.count, HTML_FLAME_NODES);
    assert_int_equal(json_integer_value(json_object_get(f.doc, "left_out")), sites + 1 - f.count);
    assert_non_null(strstr(html, "of the smallest frames are left out"));
    node_named(&f, "prog+0x1007"); /* small but for its live bytes */
    node_named(&f, "prog+0x71a7"); /* the most allocations: site 24,999 */
    assert_int_equal(field(&f, 0, 4), (long long)sites * (sites + 1) / 2); /* the root keeps all */
    for (size_t i = 0; i < f.count; i++)
        if (field(&f, i, 0) == 1 && field(&f, i, 4) < 5003 && field(&f, i, 6) == 0)
            fail_msg("node %zu (%lld allocations) should have been left out", i, field(&f, i, 4));
    json_decref(f.doc);
    free(html);
    hand_report_free(r);
}

static void one_sortable_site_table_replaces_the_three_rankings(void **state)
{
    (void)state;
    struct report *r = example_report();
    char *html = render(r, REPORT_HTML), *text = render(r, REPORT_TEXT);
    assert_int_equal(occurrences(html, "<table class=\"sortable cards\" id=\"sites\">"), 1);
    assert_null(strstr(html, "By allocations ("));
    assert_null(strstr(html, "By peak live bytes ("));
    assert_null(strstr(html, "Top sites by allocations</h3>"));
    assert_non_null(strstr(text, "By allocations ("));
    assert_non_null(strstr(text, "By bytes ("));
    assert_non_null(strstr(text, "By peak live bytes ("));
    /* Sortable: numbers carry their exact value; the first order is by allocations. */
    assert_non_null(strstr(html, "<th data-sort=\"num\" aria-sort=\"descending\">allocations"));
    assert_non_null(strstr(
        html,
        "<td class=\"num\" data-label=\"allocations\" data-v=\"40\" title=\"estimated from 40 "));
    const char *body = strstr(html, "<tbody>");
    assert_true(strstr(body, "<td class=\"site\" data-v=\"4\">#4</td>") <
                strstr(body, "<td class=\"site\" data-v=\"1\">#1</td>"));
    assert_int_equal(occurrences(strstr(html, "id=\"sites\""), "<tr><td class=\"site\" data-v="),
                     4);
    free(html);
    free(text);
    hand_report_free(r);
}

/* The example dump's page (r: its report, for report_free). */
static char *example_page(struct report *r)
{
    const char *path = EXAMPLE_DUMP;
    char error[512];
    memset(r, 0, sizeof *r);
    assert_int_equal(report_load(&path, 1, r, error, sizeof error), REPORT_OK);
    return render(r, REPORT_HTML);
}

static void the_page_is_self_contained_and_responsive(void **state)
{
    (void)state;
    struct report r;
    char *html = example_page(&r);
    assert_non_null(
        strstr(html, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>"));
    assert_int_equal(occurrences(html, "<script"), 2); /* the flame data and the script */
    assert_null(strstr(html, " src="));
    assert_null(strstr(html, "<link"));
    assert_null(strstr(html, "https:"));
    assert_int_equal(occurrences(html, "http:"), occurrences(html, "http://www.w3.org/2000/svg"));
    /* The script is in CDATA (well-formed XML) and reports that it ran. */
    assert_non_null(strstr(html, "<script>//<![CDATA[\n"));
    assert_non_null(strstr(html, "body.setAttribute('data-ready', '1');"));
    /* Every table scrolls in its box; every drawing scales from its viewBox. */
    assert_int_equal(occurrences(html, "<table"),
                     occurrences(html, "<div class=\"scroll\"><table"));
    assert_int_equal(occurrences(html, "<svg class="), occurrences(html, "viewBox="));
    /* The run on top: program, start, duration, version, stacks. */
    const char *meta = strstr(html, "<dl class=\"meta\">");
    assert_non_null(meta);
    assert_true(meta < strstr(html, "<h2"));
    assert_non_null(strstr(meta, "<dt>program</dt><dd>build/bin/fixture_queue_ring depth9</dd>"));
    assert_non_null(strstr(meta, "<dt>started</dt><dd>2026-"));
    assert_non_null(strstr(meta, "<dt>duration</dt><dd>0.00 s"));
    assert_non_null(strstr(meta, "<dt>stacks</dt><dd>always</dd>"));
    assert_non_null(strstr(meta, "<dt>qaudit</dt><dd>" QAUDIT_VERSION "</dd>"));
    free(html);
    report_free(&r);
}

/* Every chart names both axes and has a legend; 30 size classes: 15 drawn, the rest as one. */
static void charts_have_axes_and_the_rest_grouped(void **state)
{
    (void)state;
    json_t *doc = example();
    json_t *usable = json_array();
    for (int i = 1; i <= 30; i++)
        json_array_append_new(usable, json_pack("{s:i, s:i}", "usable", 16 * i, "count", i));
    json_object_set_new(doc, "usable_sizes", usable);
    const char *path = write_doc(doc, "classes.json");
    struct report r = {0};
    char error[512];
    assert_int_equal(report_load(&path, 1, &r, error, sizeof error), REPORT_OK);
    char *html = render(&r, REPORT_HTML);
    const char *chart = strstr(html, "Blocks by the running allocator");
    assert_non_null(chart);
    const char *end = strstr(chart, "</svg>");
    char *svg = strndup(chart, (size_t)(end - chart));
    assert_int_equal(occurrences(svg, "<rect class=\"bar\" x="), 1 + 15); /* legend, 15 bars */
    assert_non_null(strstr(svg, ">other 15</text><rect class=\"bar other\""));
    assert_non_null(strstr(svg, ">usable size (bytes) \xe2\x86\x93</text>")); /* categories */
    assert_non_null(strstr(svg, "class=\"axis-title\" x="));                  /* value axis ... */
    assert_non_null(strstr(svg, ">blocks</text>"));                           /* ... and its unit */
    assert_non_null(strstr(svg, "<g class=\"legend\">"));
    assert_null(strstr(svg, ">16</text><rect"));      /* classes 1-15 are the smallest */
    assert_non_null(strstr(svg, ">480</text><rect")); /* 30 * 16 */
    free(svg);
    free(html);
    report_free(&r);
    json_decref(doc);
}

/* ---- memory over time ---- */

static json_t *point(uint64_t start, uint64_t ms, uint64_t live, uint64_t rss)
{
    return json_pack("{s:I, s:I, s:I, s:I}", "time_ns", (json_int_t)(start + ms * 1000000),
                     "live_bytes", (json_int_t)live, "allocs", (json_int_t)ms, "rss_bytes",
                     (json_int_t)rss);
}

/* A dump of pid at ms after its start (its last point then), with points at the times given. */
static const char *timeline_dump(const char *name, uint64_t pid, uint64_t at_ms, const uint64_t *ms,
                                 size_t n, const char *reason)
{
    json_t *doc = example();
    json_t *process = json_object_get(doc, "process");
    uint64_t start = (uint64_t)json_integer_value(json_object_get(process, "start_time_ns"));
    json_object_set_new(process, "pid", json_integer((json_int_t)pid));
    json_object_set_new(process, "dump_time_ns",
                        json_integer((json_int_t)(start + at_ms * 1000000)));
    json_object_set_new(doc, "reason", json_string(reason));
    json_t *points = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            points, point(start, ms[i], ms[i] == 300 ? 5 << 20 : ms[i] * 1024, ms[i] * 4096));
    json_object_set_new(doc, "timeline", points);
    json_object_set_new(doc, "timeline_period_ns", json_integer(100000000));
    const char *path = write_doc(doc, name);
    json_decref(doc);
    return path;
}

static void check_merged(const struct report *r)
{
    assert_int_equal(r->process_count, 2);
    const struct report_process *p = &r->processes[0];
    if (p->pid != 11)
        p = &r->processes[1];
    assert_int_equal(p->timeline_count, 5); /* 100, 200, 300 | 300, 400, 500: one 300 */
    static const uint64_t want[] = {100, 200, 300, 400, 500};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(p->timeline[i].time_ns - p->start_time_ns, want[i] * 1000000);
    assert_int_equal(p->dump_time_count, 2);
    assert_int_equal(p->dump_times[0] - p->start_time_ns, 300 * 1000000u);
    assert_int_equal(p->dump_times[1] - p->start_time_ns, 500 * 1000000u);
    assert_int_equal(report_timeline_peak(p, false), 2); /* 5 MiB at 300 ms */
    assert_int_equal(report_timeline_peak(p, true), 4);
    const struct report_process *other = p == &r->processes[0] ? &r->processes[1] : r->processes;
    assert_int_equal(other->timeline_count, 2); /* another process keeps its own */
    assert_int_equal(other->dump_time_count, 1);
}

static void timeline_merges_one_process_snapshots_and_keeps_processes_apart(void **state)
{
    (void)state;
    const uint64_t first[] = {100, 200, 300}, last[] = {300, 400, 500}, other[] = {50, 150};
    const char *snapshot = timeline_dump("t-snap.json", 11, 300, first, 3, "signal");
    const char *final = timeline_dump("t-exit.json", 11, 500, last, 3, "exit");
    const char *another = timeline_dump("t-other.json", 12, 150, other, 2, "exit");
    const char *orders[2][3] = {{snapshot, final, another}, {another, final, snapshot}};
    for (int o = 0; o < 2; o++) {
        struct report r = {0};
        char error[512];
        assert_int_equal(report_load(orders[o], 3, &r, error, sizeof error), REPORT_OK);
        assert_int_equal(r.superseded, 1);
        check_merged(&r);
        report_free(&r);
    }
}

static void timeline_is_told_drawn_and_in_json(void **state)
{
    (void)state;
    const uint64_t first[] = {100, 200, 300}, last[] = {300, 400, 500};
    const char *paths[] = {timeline_dump("u-snap.json", 11, 300, first, 3, "signal"),
                           timeline_dump("u-exit.json", 11, 500, last, 3, "exit")};
    struct report r = {0};
    char error[512];
    assert_int_equal(report_load(paths, 2, &r, error, sizeof error), REPORT_OK);
    char *text = render(&r, REPORT_TEXT), *md = render(&r, REPORT_MARKDOWN);
    const char *line = "live bytes highest at 5.00 MiB at 0.30 s; resident set highest at 1.95 MiB "
                       "at 0.50 s (5 points over 0.50 s, one every 100 ms; 2 dumps).";
    assert_non_null(strstr(text, "== Memory over time"));
    assert_non_null(strstr(md, line));
    char *html = render(&r, REPORT_HTML);
    const char *svg = strstr(html, "<svg class=\"chart timeline\"");
    assert_non_null(svg);
    assert_non_null(strstr(svg, ">seconds since the process started</text>"));
    assert_non_null(strstr(svg, ">live heap (MiB)</text>"));
    assert_non_null(strstr(svg, ">RSS (MiB)</text>"));
    assert_non_null(strstr(svg, ">live heap bytes</text>"));
    assert_non_null(strstr(svg, ">resident set (RSS)</text>"));
    assert_non_null(strstr(svg, "<title>a dump (snapshot) at 0.300 s</title>"));
    assert_non_null(strstr(svg, "<title>the last dump at 0.500 s</title>"));
    assert_non_null(strstr(svg, "<title>live heap bytes highest: 5.00 MiB at 0.300 s</title>"));
    json_t *j = report_timeline_json(&r);
    assert_int_equal(json_array_size(j), 1);
    json_t *p = json_array_get(j, 0);
    assert_int_equal(json_integer_value(json_object_get(p, "pid")), 11);
    assert_int_equal(json_array_size(json_object_get(p, "points")), 5);
    assert_int_equal(json_array_size(json_object_get(p, "dump_times_ns")), 2);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(p, "peak_live"), "live_bytes")),
        5 << 20);
    json_decref(j);
    free(text);
    free(md);
    free(html);
    report_free(&r);
}

/* Thousands of points (many snapshots merged) draw at most 1,200 vertices, the spike among them;
 * past 8 processes the charts stop and a note says so. */
static void timeline_charts_stay_small(void **state)
{
    (void)state;
    json_t *doc = example(), *series = json_array();
    uint64_t start = (uint64_t)json_integer_value(
        json_object_get(json_object_get(doc, "process"), "start_time_ns"));
    for (uint64_t i = 0; i < 5000; i++) /* a spike of 50 MiB in the middle of a few KiB */
        json_array_append_new(series, point(start, i, i == 2345 ? 50 << 20 : 1024 * (i % 7), 0));
    json_object_set_new(doc, "timeline", series);
    json_object_set_new(doc, "timeline_period_ns", json_integer(1000000));
    const char *path = write_doc(doc, "long.json");
    json_decref(doc);
    struct report r = {0};
    char error[512];
    assert_int_equal(report_load(&path, 1, &r, error, sizeof error), REPORT_OK);
    char *html = render(&r, REPORT_HTML);
    const char *line = strstr(html, "<polyline class=\"live\" points=\"");
    assert_non_null(line);
    char *points = strndup(line, (size_t)(strstr(line, "\"/>") - line));
    assert_true(occurrences(points, ",") <= 1200);
    assert_non_null(strstr(points, ",54.0")); /* the spike, at the panel's top */
    free(points);
    free(html);
    report_free(&r);
    const char *paths[10];
    const uint64_t ms[] = {100, 200, 300};
    for (int i = 0; i < 10; i++) {
        char name[32];
        snprintf(name, sizeof name, "p%d.json", i);
        paths[i] = strdup(timeline_dump(name, 20 + (uint64_t)i, 300, ms, 3, "exit"));
    }
    assert_int_equal(report_load(paths, 10, &r, error, sizeof error), REPORT_OK);
    html = render(&r, REPORT_HTML);
    assert_int_equal(occurrences(html, "<svg class=\"chart timeline\""), 8);
    assert_int_equal(occurrences(html, "Charts for the first 8 processes only"), 1);
    char *text = render(&r, REPORT_TEXT);
    assert_int_equal(occurrences(text, "live bytes highest at"), 10);
    for (int i = 0; i < 10; i++)
        free((char *)paths[i]);
    free(text);
    free(html);
    report_free(&r);
}

/* A dump of pid 30 with points at the times given (ms after its start), its last the dump's, a
 * 100 ms period, and its writer's state ("forked": waiting in a process that forked; started
 * and stopped in ms, 0: not given). */
static const char *writer_dump(const char *name, const uint64_t *ms, size_t n, const char *state,
                               uint64_t started_ms, uint64_t stopped_ms)
{
    json_t *doc = example();
    json_t *process = json_object_get(doc, "process");
    uint64_t start = (uint64_t)json_integer_value(json_object_get(process, "start_time_ns"));
    json_object_set_new(process, "pid", json_integer(30));
    json_object_set_new(process, "dump_time_ns",
                        json_integer((json_int_t)(start + ms[n - 1] * 1000000)));
    json_t *points = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(points, point(start, ms[i], 1024 * (i + 1), 4096));
    json_object_set_new(doc, "timeline", points);
    json_object_set_new(doc, "timeline_period_ns", json_integer(100000000));
    bool forks = strcmp(state, "forked") == 0; /* waiting, in a process that forked */
    json_t *writer = json_pack("{s:s, s:i, s:b}", "state", forks ? "waiting" : state, "delay_ms",
                               100, "forks", forks);
    if (started_ms)
        json_object_set_new(writer, "started_ns",
                            json_integer((json_int_t)(start + started_ms * 1000000)));
    if (stopped_ms)
        json_object_set_new(writer, "stopped_ns",
                            json_integer((json_int_t)(start + stopped_ms * 1000000)));
    json_object_set_new(doc, "timeline_writer", writer);
    const char *path = write_doc(doc, name);
    json_decref(doc);
    return path;
}

/* Its Markdown, HTML and JSON report's gaps (untell frees them). */
struct told {
    char *text, *html;
    json_t *gaps;
    struct report r;
};

static void tell(struct told *t, const uint64_t *ms, size_t n, const char *state,
                 uint64_t started_ms, uint64_t stopped_ms)
{
    const char *path = writer_dump("w.json", ms, n, state, started_ms, stopped_ms);
    char error[512];
    memset(t, 0, sizeof *t);
    assert_int_equal(report_load(&path, 1, &t->r, error, sizeof error), REPORT_OK);
    t->text = render(&t->r, REPORT_MARKDOWN); /* not wrapped */
    t->html = render(&t->r, REPORT_HTML);
    json_t *j = report_timeline_json(&t->r);
    t->gaps = json_incref(json_object_get(json_array_get(j, 0), "gaps"));
    json_decref(j);
}

static void untell(struct told *t)
{
    free(t->text);
    free(t->html);
    json_decref(t->gaps);
    report_free(&t->r);
}

static const char *gap_reason(const struct told *t, size_t i)
{
    return json_string_value(json_object_get(json_array_get(t->gaps, i), "reason"));
}

/* Issue 39: "N points, 100 ms apart" was said of 2 points over 5 s. Each process's line says
 * what its points are; a stretch longer than two periods without one is said with its reason
 * (exactly two periods is none, a nanosecond more is one), and its chart is not drawn when such
 * stretches leave half its life or more without a point. */
static void timeline_says_why_points_are_fewer(void **state)
{
    (void)state;
    struct told t;
    const uint64_t idle[] = {0, 5000};
    tell(&t, idle, 2, "waiting", 0, 0);
    assert_non_null(strstr(t.text, "(2 points over 5.00 s at a 100 ms period, fewer where said"));
    assert_null(strstr(t.text, "one every"));
    assert_non_null(strstr(t.text, "No point from 0.00 s to 5.00 s: the process made next to no "
                                   "allocation from 0.10 s to 5.00 s, and its writer thread"));
    assert_int_equal(json_array_size(t.gaps), 1);
    assert_string_equal(gap_reason(&t, 0), "writer_waiting");
    assert_null(strstr(t.html, "<svg class=\"chart timeline\""));
    untell(&t);

    const uint64_t stopped[] = {0, 100, 200, 300, 400, 500, 4000, 4100};
    tell(&t, stopped, 8, "running", 100, 0);
    assert_non_null(strstr(t.text, "No point from 0.50 s to 4.00 s although its writer thread "
                                   "ran: the process did not run then"));
    assert_string_equal(gap_reason(&t, 0), "process_not_running");
    untell(&t);

    tell(&t, idle, 2, "forked", 0, 0);
    assert_non_null(strstr(t.text, "No point from 0.00 s to 5.00 s: the process forks children, "
                                   "so it keeps one thread"));
    assert_string_equal(gap_reason(&t, 0), "process_forks");
    untell(&t);

    tell(&t, idle, 2, "failed", 0, 1);
    assert_non_null(strstr(t.text, "its writer thread could not start"));
    assert_string_equal(gap_reason(&t, 0), "writer_failed");
    untell(&t);

    const uint64_t ended[] = {0, 100, 200, 300, 3000};
    tell(&t, ended, 5, "ended", 100, 350);
    assert_non_null(strstr(t.text, "ended with the main thread (pthread_exit) at 0.35 s"));
    assert_string_equal(gap_reason(&t, 0), "writer_ended");
    untell(&t);

    const uint64_t brief[] = {0, 50};
    tell(&t, brief, 2, "waiting", 0, 0);
    assert_non_null(strstr(t.text, "(2 points over 0.05 s, less than two periods of 100 ms;"));
    assert_int_equal(json_array_size(t.gaps), 0);
    untell(&t);

    const uint64_t at_limit[] = {0, 100, 300, 400, 500, 600, 700};
    tell(&t, at_limit, 7, "running", 100, 0);
    assert_int_equal(json_array_size(t.gaps), 0); /* 100 to 300 ms: two periods exactly */
    assert_non_null(strstr(t.text, "(7 points over 0.70 s, one every 100 ms;"));
    untell(&t);

    const uint64_t past_limit[] = {0, 100, 301, 400, 500, 600, 700};
    tell(&t, past_limit, 7, "running", 100, 0);
    assert_int_equal(json_array_size(t.gaps), 1);
    assert_non_null(strstr(t.text, "No point from 0.10 s to 0.30 s although"));
    assert_non_null(strstr(t.html, "<svg class=\"chart timeline\"")); /* most of its life drawn */
    untell(&t);
}

/* Drawn while no stretch without a point takes half the life: 300 ms of 600 is half (not
 * drawn), 299 ms is less (drawn); two stretches of 200 ms each, 400 of 600 in all, spread over
 * the life, leave a line that shows it (drawn). */
static void timeline_chart_drawn_only_when_it_shows_something(void **state)
{
    (void)state;
    struct told t;
    const uint64_t half[] = {0, 100, 200, 300, 600};
    tell(&t, half, 5, "running", 100, 0);
    assert_int_equal(json_array_size(t.gaps), 1);
    assert_null(strstr(t.html, "<svg class=\"chart timeline\""));
    untell(&t);
    const uint64_t less[] = {0, 100, 200, 301, 600};
    tell(&t, less, 5, "running", 100, 0);
    assert_int_equal(json_array_size(t.gaps), 1);
    assert_non_null(strstr(t.html, "<svg class=\"chart timeline\""));
    untell(&t);
    const uint64_t spread[] = {0, 100, 300, 400, 600};
    tell(&t, spread, 5, "running", 100, 0);
    assert_int_equal(json_array_size(t.gaps), 0); /* each exactly two periods: not a stretch */
    assert_non_null(strstr(t.html, "<svg class=\"chart timeline\""));
    untell(&t);
    const uint64_t starved[] = {0, 50, 260, 300, 510, 600};
    tell(&t, starved, 6, "running", 50, 0);
    assert_int_equal(json_array_size(t.gaps), 2); /* 210 ms twice: 420 of 600 without a point */
    assert_non_null(strstr(t.html, "<svg class=\"chart timeline\""));
    untell(&t);
}

/* Issue 39: the first screen. Right under what to look at first come the top sites (their table
 * with each site's where, then the flame graph), the run's lines above both; the stacks of the
 * top sites stay in the document's order under a heading of their own. */
static void top_sites_right_after_what_to_look_at_first(void **state)
{
    (void)state;
    struct report r;
    char *html = example_page(&r);
    const char *banner = strstr(html, "id=\"summary\"");
    assert_non_null(banner);
    const char *after = strstr(banner, "</div>\n");
    assert_non_null(after);
    const char *next = "</div>\n<h2 id=\"top-allocation-sites\">";
    assert_true(strncmp(after, next, strlen(next)) == 0);
    const char *table = strstr(html, "id=\"sites\""), *flame = strstr(html, "id=\"flame-canvas\"");
    assert_true(after < table && table < flame);
    assert_true(strstr(html, "<dl class=\"meta\">") < banner);
    const char *stacks = strstr(html, "<h2 id=\"site-stacks\">Stacks of the top sites</h2>");
    assert_true(stacks > flame);
    assert_int_equal(occurrences(html, "id=\"top-allocation-sites\""), 1);
    free(html);
    report_free(&r);
}

/* An older dump has no timeline and no section; a mistyped one is named. */
static void timeline_absent_or_mistyped(void **state)
{
    (void)state;
    const char *path = EXAMPLE_DUMP;
    struct report r = {0};
    char error[512] = "";
    assert_int_equal(report_load(&path, 1, &r, error, sizeof error), REPORT_OK);
    char *text = render(&r, REPORT_TEXT), *html = render(&r, REPORT_HTML);
    assert_null(strstr(text, "Memory over time"));
    assert_null(strstr(html, "class=\"chart timeline\""));
    free(text);
    free(html);
    report_free(&r);
    json_t *doc = example();
    json_object_set_new(doc, "timeline", json_string("soon"));
    path = write_doc(doc, "bad-timeline.json");
    memset(&r, 0, sizeof r);
    assert_int_equal(report_load(&path, 1, &r, error, sizeof error), REPORT_INPUT_ERROR);
    assert_non_null(strstr(error, "timeline is not an array"));
    report_free(&r);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flame_frames_are_the_folded_stacks_frames),
        cmocka_unit_test(flame_nodes_carry_their_figures_and_lines),
        cmocka_unit_test(flame_keeps_the_largest_nodes),
        cmocka_unit_test(one_sortable_site_table_replaces_the_three_rankings),
        cmocka_unit_test(the_page_is_self_contained_and_responsive),
        cmocka_unit_test(charts_have_axes_and_the_rest_grouped),
        cmocka_unit_test(timeline_merges_one_process_snapshots_and_keeps_processes_apart),
        cmocka_unit_test(timeline_is_told_drawn_and_in_json),
        cmocka_unit_test(timeline_charts_stay_small),
        cmocka_unit_test(timeline_absent_or_mistyped),
        cmocka_unit_test(timeline_says_why_points_are_fewer),
        cmocka_unit_test(timeline_chart_drawn_only_when_it_shows_something),
        cmocka_unit_test(top_sites_right_after_what_to_look_at_first),
    };
    return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
