/* The allocation rules checked: each baseline figure against the run's, within the rule's
 * tolerance (none for the queue at depth one), sampled figures by their error ranges; a site
 * that allocates where the baseline had none breaks a rule; a rule the dumps cannot speak to is
 * n/a, never a pass. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "reports_gate.h"

bool report_alloc_rule_add(struct alloc_gate_report *g, const char *subject, const char *rule,
                           const char *message, const char *file, unsigned line,
                           enum alloc_verdict verdict)
{
    if (!array_reserve(&g->rules, &g->capacity, g->count + 1, sizeof *g->rules))
        return false;
    g->rules[g->count++] = (struct alloc_rule){strdup(subject),
                                               strdup(rule),
                                               message ? strdup(message) : NULL,
                                               file ? strdup(file) : NULL,
                                               line,
                                               verdict};
    g->broken += verdict == ALLOC_BROKEN;
    g->not_applicable += verdict == ALLOC_NA;
    return true;
}

struct check {
    struct alloc_gate_report *g;
    const struct alloc_figures *f;
    double tolerance;     /* the command line's, else the file's */
    const char *unit;     /* " per unit of work" after flow figures, or "" */
    double per, base_per; /* the run's units of work and the baseline's (0: not normalised) */
    bool exact_claim;     /* the figure under check takes no tolerance (the queue at depth one) */
    json_t *tolerance_holder; /* where its own tolerance is, when not beside it */
};

/* A rule with a verdict and, unless it held, its line: "SUBJECT: RULE " + fmt. */
static void say(struct check *c, const char *subject, const char *file, unsigned line,
                const char *rule, enum alloc_verdict v, const char *fmt, ...)
{
    char message[1536];
    if (v != ALLOC_HELD) {
        int n = snprintf(message, sizeof message, "%s: %s ", subject, rule);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(message + n, sizeof message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    report_alloc_rule_add(c->g, subject, rule, v == ALLOC_HELD ? NULL : message, file, line, v);
}

/* A rule's tolerance: its holder's own "tolerance", for all its figures ("10%") or per figure
 * ({"temporary": "50%"}), else the check's. */
static double tolerance_of(const struct check *c, json_t *holder, const char *key)
{
    double t;
    json_t *own = json_object_get(holder, "tolerance");
    if (json_is_object(own))
        own = json_object_get(own, key);
    const char *text = json_string_value(own);
    if (text != NULL && report_alloc_tolerance_parse(text, &t))
        return t;
    return c->tolerance;
}

static bool number(json_t *v, double *out)
{
    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return true;
}

/* Whether after (its range [low, high]) exceeds before (range [b_low, b_high]) by more than
 * tolerance: the run's lower bound above the baseline's upper one raised by the tolerance. A
 * slack of a millionth absorbs the rounding of written figures (10 significant digits). */
static bool exceeds(double low, double b_high, double tolerance)
{
    double limit = b_high * (1 + tolerance);
    return low > limit + 1e-6 * fmax(1e-3, fabs(limit));
}

/* One figure of a site or of the totals: before from the baseline (with its range when sampled),
 * after from the run. A flow figure (per unit of work) breaks only when it grew both per unit and
 * in all (times the units of each run): a cost paid once, at start-up or per connection, does not
 * grow in all when a run is shorter, though it does per unit. */
static void figure_rule(struct check *c, const char *subject, const char *file, unsigned line,
                        const char *rule, json_t *holder, const char *key, double after,
                        double after_low, double after_high, bool flow)
{
    double before, b_low, b_high;
    if (!number(json_object_get(holder, key), &before))
        return;
    double tolerance =
        c->exact_claim ? 0
                       : tolerance_of(c, c->tolerance_holder ? c->tolerance_holder : holder, key);
    char range_key[64];
    snprintf(range_key, sizeof range_key, "%s_range", key);
    json_t *range = json_object_get(holder, range_key);
    b_low = b_high = before;
    if (json_is_array(range) && json_array_size(range) == 2) {
        number(json_array_get(range, 0), &b_low);
        number(json_array_get(range, 1), &b_high);
    }
    const char *unit = flow ? c->unit : "";
    char ranges[256] = "";
    if (b_low != b_high || after_low != after_high)
        snprintf(ranges, sizeof ranges, " (ranges %.4g-%.4g -> %.4g-%.4g)", b_low, b_high,
                 after_low, after_high);
    bool broken = exceeds(after_low, b_high, tolerance);
    if (broken && flow && c->per > 0)
        broken = exceeds(after_low * c->per, b_high * c->base_per, tolerance);
    if (broken)
        say(c, subject, file, line, rule, ALLOC_BROKEN,
            "%.6g -> %.6g%s (+%.4g%%, tolerance %g%%)%s", before, after, unit,
            before > 0 ? (after - before) * 100 / before : INFINITY, tolerance * 100, ranges);
    else
        say(c, subject, file, line, rule, ALLOC_HELD, NULL);
}

static void na(struct check *c, const char *subject, const char *file, unsigned line,
               const char *rule, const char *why)
{
    say(c, subject, file, line, rule, ALLOC_NA, "n/a: %s", why);
}

/* The rules of one baseline site against the run's site of the same key. */
static void check_site(struct check *c, const char *key, json_t *site)
{
    const char *where = json_string_value(json_object_get(site, "where"));
    const char *file = json_string_value(json_object_get(site, "file"));
    unsigned line = (unsigned)json_integer_value(json_object_get(site, "line"));
    const struct alloc_site_figures *now = report_gate_site(c->f, key);
    if (now != NULL)
        where = now->where, file = now->file, line = now->line;
    if (where == NULL)
        where = key;
    if (!c->f->has_sites) {
        na(c, where, file, line, "allocs", "the dumps have no stacks (qaudit run --stacks off)");
        return;
    }
    struct alloc_site_figures zero = {0};
    const struct alloc_site_figures *s = now ? now : &zero;
    figure_rule(c, where, file, line, "allocs", site, "allocs", s->allocs, s->allocs_low,
                s->allocs_high, true);
    figure_rule(c, where, file, line, "bytes", site, "bytes", s->bytes, s->bytes_low, s->bytes_high,
                true);
    if (!c->f->has_temporary)
        na(c, where, file, line, "temporary", "the dumps do not count temporary allocations");
    else if (s->estimated || json_object_get(site, "allocs_range") != NULL)
        na(c, where, file, line, "temporary", "sampled stacks give temporaries no error range");
    else
        figure_rule(c, where, file, line, "temporary", site, "temporary", s->temporary,
                    s->temporary, s->temporary, true);
    if (!c->f->at_exit)
        na(c, where, file, line, "live_blocks", "the dumps were written while it ran, not at exit");
    else if (s->estimated)
        na(c, where, file, line, "live_blocks", "sampled stacks: live blocks are estimates");
    else
        figure_rule(c, where, file, line, "live_blocks", site, "live_blocks", s->live_blocks,
                    s->live_blocks, s->live_blocks, false);
}

/* A site of the run the baseline does not hold: a broken rule when it allocates. */
static void check_new_site(struct check *c, const struct alloc_site_figures *s, bool sampled_base)
{
    if (s->allocs <= 0)
        return;
    if (sampled_base)
        na(c, s->where, s->file, s->line, "new_site",
           "the baseline's stacks were sampled: a site it did not see may have allocated");
    else
        say(c, s->where, s->file, s->line, "new_site", ALLOC_BROKEN,
            "0 -> %.6g allocations%s (%.6g B, %.6g temporary, %.6g live at exit): a new "
            "allocating site",
            s->allocs, c->unit, s->bytes, s->temporary, s->live_blocks);
}

static void check_sites(struct check *c, json_t *alloc)
{
    json_t *sites = json_object_get(alloc, "sites");
    const char *key;
    json_t *site;
    json_object_foreach(sites, key, site) check_site(c, key, site);
    if (!c->f->has_sites)
        return;
    const char *stacks = json_string_value(json_object_get(alloc, "stacks"));
    bool sampled_base = stacks != NULL && strcmp(stacks, "sampled") == 0;
    bool base_off = stacks != NULL && strcmp(stacks, "off") == 0;
    for (size_t i = 0; i < c->f->count; i++)
        if (json_object_get(sites, c->f->sites[i].key) == NULL) {
            if (base_off)
                na(c, c->f->sites[i].where, c->f->sites[i].file, c->f->sites[i].line, "new_site",
                   "the baseline was written without stacks");
            else
                check_new_site(c, &c->f->sites[i], sampled_base);
        }
}

static void check_totals(struct check *c, json_t *alloc)
{
    json_t *totals = json_object_get(alloc, "totals");
    if (!json_is_object(totals))
        return;
    const struct alloc_figures *f = c->f;
    figure_rule(c, "run", NULL, 0, "totals.allocs", totals, "allocs", f->allocs, f->allocs,
                f->allocs, true);
    figure_rule(c, "run", NULL, 0, "totals.bytes", totals, "bytes", f->bytes, f->bytes, f->bytes,
                true);
    if (f->has_temporary)
        figure_rule(c, "run", NULL, 0, "totals.temporary", totals, "temporary", f->temporary,
                    f->temporary, f->temporary, true);
    else
        na(c, "run", NULL, 0, "totals.temporary", "the dumps do not count temporary allocations");
    figure_rule(c, "run", NULL, 0, "totals.peak_live_bytes", totals, "peak_live_bytes",
                f->peak_live_bytes, f->peak_live_bytes_low, f->peak_live_bytes_high, false);
    if (f->at_exit)
        figure_rule(c, "run", NULL, 0, "totals.live_blocks", totals, "live_blocks", f->live_blocks,
                    f->live_blocks, f->live_blocks, false);
    else
        na(c, "run", NULL, 0, "totals.live_blocks",
           "the dumps were written while it ran, not at exit");
}

/* The queue audit's rules: allocations per connection by peak depth (none tolerated at depth
 * one: it is the claim under audit), and the depth-one check, which must still pass. */
static void check_queue(struct check *c, json_t *alloc)
{
    json_t *queue = json_object_get(alloc, "queue");
    if (!json_is_object(queue))
        return;
    const struct alloc_figures *f = c->f;
    json_t *per = json_object_get(queue, "allocs_per_connection");
    const char *depth;
    json_t *value;
    json_object_foreach(per, depth, value)
    {
        if (!json_is_number(value))
            continue;
        char rule[64];
        snprintf(rule, sizeof rule, "queue.allocs_per_connection.%s", depth);
        unsigned long d = strtoul(depth, NULL, 10);
        if (!f->queue_audit)
            na(c, "queue", NULL, 0, rule, "the dumps hold no queue audit (no hooks, no --sites)");
        else if (d >= sizeof f->per_connection / sizeof f->per_connection[0] ||
                 f->per_connection[d] < 0)
            na(c, "queue", NULL, 0, rule, "no connection's queue peaked at that depth");
        else {
            c->exact_claim = d == 1;
            c->tolerance_holder = queue; /* the queue's own tolerance, for every depth */
            figure_rule(c, "queue", NULL, 0, rule, per, depth, f->per_connection[d],
                        f->per_connection[d], f->per_connection[d], false);
            c->exact_claim = false;
            c->tolerance_holder = NULL;
        }
    }
    const char *before = json_string_value(json_object_get(queue, "depth_one_no_alloc"));
    if (before == NULL || strcmp(before, "pass") != 0)
        return; /* only a pass is a claim to keep */
    if (!f->queue_audit || f->depth_one == CHECK_NA)
        na(c, "queue", NULL, 0, "queue.depth_one_no_alloc",
           "the dumps hold no queue audit at depth one");
    else if (f->depth_one == CHECK_FAIL)
        say(c, "queue", NULL, 0, "queue.depth_one_no_alloc", ALLOC_BROKEN,
            "pass -> fail: a depth-one push/pop cycle allocated");
    else
        say(c, "queue", NULL, 0, "queue.depth_one_no_alloc", ALLOC_HELD, NULL);
}

/* The baseline's settings against the command line's: per must be given exactly when the
 * baseline's figures are per unit of work, and the dumps must be of its program. */
static bool settings_agree(json_t *alloc, const struct alloc_gate_settings *s,
                           const struct alloc_figures *f, const char *path, char *error,
                           size_t size)
{
    double per = 0;
    number(json_object_get(alloc, "per"), &per);
    const char *program = json_string_value(json_object_get(alloc, "program"));
    if (per > 0 && s->per <= 0)
        snprintf(error, size,
                 "%s: its allocation figures are per unit of work (written with --per %g): give "
                 "--per N, the units of work the dumps' run did",
                 path, per);
    else if (per <= 0 && s->per > 0)
        snprintf(error, size,
                 "%s: its allocation figures are the run's own, not per unit of "
                 "work: --per does not apply",
                 path);
    else if (program != NULL && program[0] && strcmp(program, f->program) != 0)
        snprintf(error, size,
                 "the dumps are of %s, %s's allocation rules of %s: nothing to compare",
                 f->program[0] ? f->program : "(no process)", path, program);
    else
        return true;
    return false;
}

enum report_status report_alloc_check(const struct report *r, const char *path,
                                      const struct alloc_gate_settings *settings,
                                      struct alloc_gate_report *out, char *error, size_t size)
{
    memset(out, 0, sizeof *out);
    json_t *doc = report_gate_load(path, false, error, size);
    if (doc == NULL)
        return REPORT_INPUT_ERROR;
    json_t *alloc = json_object_get(doc, "allocations");
    struct alloc_figures f;
    enum report_status status = REPORT_INPUT_ERROR;
    if (!json_is_object(alloc)) {
        snprintf(error, size,
                 "%s holds no allocation rules (write them: qaudit gate --write-baseline %s "
                 "--dump DUMP)",
                 path, path);
    } else if (!report_gate_figures(r, settings->per, &f)) {
        snprintf(error, size, "out of memory gathering the sites");
    } else {
        if (settings_agree(alloc, settings, &f, path, error, size)) {
            double t = 0;
            const char *file_tolerance = json_string_value(json_object_get(alloc, "tolerance"));
            if (settings->tolerance >= 0)
                t = settings->tolerance;
            else if (file_tolerance != NULL)
                report_alloc_tolerance_parse(file_tolerance, &t);
            struct check c = {.g = out, .f = &f, .tolerance = t, .per = settings->per};
            c.unit = settings->per > 0 ? " per unit of work" : "";
            number(json_object_get(alloc, "per"), &c.base_per);
            check_sites(&c, alloc);
            check_totals(&c, alloc);
            check_queue(&c, alloc);
            status = out->broken > 0 ? REPORT_CHECK_FAILED : REPORT_OK;
        }
        report_gate_figures_free(&f);
    }
    json_decref(doc);
    return status;
}

void report_alloc_gate_free(struct alloc_gate_report *g)
{
    for (size_t i = 0; i < g->count; i++) {
        free(g->rules[i].subject);
        free(g->rules[i].rule);
        free(g->rules[i].message);
        free(g->rules[i].file);
    }
    free(g->rules);
    memset(g, 0, sizeof *g);
}
