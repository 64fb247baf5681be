/* GET /metrics: the Prometheus text exposition format (0.0.4), or OpenMetrics 1.0 when the
 * scraper asks for it, one series per process labelled pid, exe, build_id and run_id. Counters
 * never go back for one process (a figure read lower than the one shown is shown as before; a
 * process restarted under the same pid has another run_id). Whether a process's counts are
 * exact is a companion gauge, qaudit_counts_exact, not a label, so that a change of precision
 * does not cut a counter into two series. A process whose dump could not be had in time has
 * qaudit_scrape_success 0 and no other series (as node_exporter's collectors). Metric names are
 * stable (docs/design.md, "Stable names"). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum kind { COUNTER, GAUGE, HISTOGRAM };
static const char *const kind_names[] = {"counter", "gauge", "histogram"};

struct out {
    FILE *f;
    bool openmetrics;
};

/* The label set of t, values escaped as the format wants (backslash, quote, newline). */
static void labels(FILE *f, const struct target *t, const char *extra)
{
    const char *names[] = {"pid", "exe", "build_id", "run_id"};
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)t->pid);
    const char *values[] = {pid, t->exe, t->build_id, t->run_id};
    fputc('{', f);
    for (int i = 0; i < 4; i++) {
        fprintf(f, "%s%s=\"", i ? "," : "", names[i]);
        for (const char *c = values[i]; *c; c++) {
            if (*c == '\\' || *c == '"')
                fputc('\\', f);
            if (*c == '\n')
                fputs("\\n", f);
            else
                fputc(*c, f);
        }
        fputc('"', f);
    }
    if (extra != NULL)
        fprintf(f, ",%s", extra);
    fputc('}', f);
}

/* # HELP and # TYPE of a family; OpenMetrics names a counter's family without "_total". */
static void family(const struct out *o, const char *name, enum kind kind, const char *help)
{
    int length = (int)strlen(name);
    if (o->openmetrics && kind == COUNTER && length > 6 && strcmp(name + length - 6, "_total") == 0)
        length -= 6;
    fprintf(o->f, "# HELP %.*s %s\n# TYPE %.*s %s\n", length, name, help, length, name,
            kind_names[kind]);
}

struct series {
    const char *name;
    enum kind kind;
    const char *help;
    size_t offset; /* the figure in struct figures */
    bool queue;    /* a queue audit's: only for processes with one */
};

#define FIG(field) offsetof(struct figures, field)
static const struct series plain[] = {
    {"qaudit_allocations_total", COUNTER,
     "Allocations counted by libqaudit-preload.so in the process (malloc family calls, "
     "reallocs excluded).",
     FIG(allocs), false},
    {"qaudit_frees_total", COUNTER, "Blocks freed, counted by libqaudit-preload.so.", FIG(frees),
     false},
    {"qaudit_allocated_bytes_total", COUNTER, "Bytes requested by the allocations counted.",
     FIG(bytes), false},
    {"qaudit_live_bytes", GAUGE, "Bytes requested by the blocks live at the process's last dump.",
     FIG(live_bytes), false},
    {"qaudit_live_blocks", GAUGE, "Blocks live at the process's last dump.", FIG(live_blocks),
     false},
    {"qaudit_peak_live_bytes", GAUGE, "The most bytes live at once since the process started.",
     FIG(peak_live_bytes), false},
    {"qaudit_queue_pushes_total", COUNTER, "Pushes into the audited receive queues.", FIG(pushes),
     true},
    {"qaudit_queue_depth_one_allocations_total", COUNTER,
     "Allocations made inside a queue operation at depth one.", FIG(depth_one_allocs), true},
};

static uint64_t value_at(const struct figures *f, size_t offset)
{
    uint64_t v;
    memcpy(&v, (const char *)f + offset, sizeof v);
    return v;
}

/* What is shown: counters never below what was shown before for the same process image. */
static void settle(struct target *t)
{
    struct figures shown = t->fig;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        if (plain[i].kind != COUNTER)
            continue;
        uint64_t before = value_at(&t->shown, plain[i].offset);
        if (value_at(&shown, plain[i].offset) < before)
            memcpy((char *)&shown + plain[i].offset, &before, sizeof before);
    }
    for (int b = 0; b < SERVE_DEPTH_BUCKETS; b++)
        if (shown.depth_buckets[b] < t->shown.depth_buckets[b])
            shown.depth_buckets[b] = t->shown.depth_buckets[b];
    if (shown.depth_sum < t->shown.depth_sum)
        shown.depth_sum = t->shown.depth_sum;
    t->shown = shown;
}

static void histogram(const struct out *o, struct target *const *targets, const bool *ok, size_t n)
{
    const char *name = "qaudit_queue_connection_peak_depth";
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (!ok[i] || !targets[i]->shown.queue_audit)
            continue;
        if (!any)
            family(o, name, HISTOGRAM,
                   "Connections by the deepest their receive queue went (pushes not yet "
                   "popped).");
        any = true;
        const struct figures *f = &targets[i]->shown;
        for (int b = 0; b < SERVE_DEPTH_BUCKETS; b++) {
            char le[32];
            if (b == SERVE_DEPTH_BUCKETS - 1)
                snprintf(le, sizeof le, "le=\"+Inf\"");
            else
                snprintf(le, sizeof le, o->openmetrics ? "le=\"%llu.0\"" : "le=\"%llu\"",
                         1ull << b);
            fprintf(o->f, "%s_bucket", name);
            labels(o->f, targets[i], le);
            fprintf(o->f, " %llu\n", (unsigned long long)f->depth_buckets[b]);
        }
        fprintf(o->f, "%s_sum", name);
        labels(o->f, targets[i], NULL);
        fprintf(o->f, " %llu\n%s_count", (unsigned long long)f->depth_sum, name);
        labels(o->f, targets[i], NULL);
        fprintf(o->f, " %llu\n", (unsigned long long)f->depth_buckets[SERVE_DEPTH_BUCKETS - 1]);
    }
}

/* A gauge per process from a small function of its figures; -1 leaves a process out. */
static void gauge(const struct out *o, const char *name, const char *help,
                  struct target *const *targets, const bool *ok, size_t n,
                  int (*value)(const struct target *, bool ok))
{
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        int v = value(targets[i], ok[i]);
        if (v < 0)
            continue;
        if (!any)
            family(o, name, GAUGE, help);
        any = true;
        fputs(name, o->f);
        labels(o->f, targets[i], NULL);
        fprintf(o->f, " %d\n", v);
    }
}

static int success(const struct target *t, bool ok)
{
    (void)t;
    return ok ? 1 : 0;
}

static int exact(const struct target *t, bool ok)
{
    return ok ? t->shown.exact : -1;
}

/* The depth-one check: 1 passed, 0 failed; a process where it could not apply is left out. */
static int depth_one(const struct target *t, bool ok)
{
    return ok && t->shown.queue_audit ? t->shown.depth_one_check : -1;
}

char *exposition_render(struct target *const *targets, const bool *ok, size_t n, bool openmetrics,
                        size_t *length)
{
    char *body = NULL;
    struct out o = {open_memstream(&body, length), openmetrics};
    if (o.f == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (ok[i])
            settle(targets[i]);
    gauge(&o, "qaudit_scrape_success",
          "Whether the process's dump was had for this scrape (0: stopped, busy or unreadable; "
          "its other series are left out).",
          targets, ok, n, success);
    for (size_t s = 0; s < sizeof plain / sizeof plain[0]; s++) {
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            if (!ok[i] || (plain[s].queue && !targets[i]->shown.queue_audit))
                continue;
            if (!any)
                family(&o, plain[s].name, plain[s].kind, plain[s].help);
            any = true;
            fputs(plain[s].name, o.f);
            labels(o.f, targets[i], NULL);
            fprintf(o.f, " %llu\n",
                    (unsigned long long)value_at(&targets[i]->shown, plain[s].offset));
        }
    }
    histogram(&o, targets, ok, n);
    gauge(&o, "qaudit_queue_depth_one_check",
          "The depth-one check (a push/pop cycle at depth one allocates nothing): 1 passed, 0 "
          "failed; left out where it could not apply.",
          targets, ok, n, depth_one);
    gauge(&o, "qaudit_counts_exact",
          "1 when the process's counts are exact, 0 when some are partial or estimated "
          "(sampled stacks, blocks untracked; qaudit report says why).",
          targets, ok, n, exact);
    if (openmetrics)
        fputs("# EOF\n", o.f);
    if (fclose(o.f) != 0) {
        free(body);
        return NULL;
    }
    return body;
}
