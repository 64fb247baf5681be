/* The baseline's allocation rules: read, and written from a run into the "allocations" of the
 * same qaudit-baseline/1 file that holds the struct rules, keeping everything else it says. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/baseline_file.h"
#include "reports_gate.h"

bool report_alloc_tolerance_parse(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || strcmp(end, "%") != 0 || errno != 0 || !isfinite(v) || v < 0)
        return false;
    *out = v / 100;
    return true;
}

json_t *report_gate_load(const char *path, bool missing_ok, char *error, size_t size)
{
    FILE *in = fopen(path, "r");
    if (in == NULL && errno == ENOENT && missing_ok)
        return json_pack("{s:s}", "format", "qaudit-baseline/1");
    if (in == NULL) {
        snprintf(error, size, "%s: %s", path, strerror(errno));
        return NULL;
    }
    json_error_t jerr;
    json_t *doc = json_loadf(in, JSON_REJECT_DUPLICATES, &jerr);
    fclose(in);
    if (doc == NULL) {
        snprintf(error, size, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
        return NULL;
    }
    const char *format = json_string_value(json_object_get(doc, "format"));
    if (format == NULL || strcmp(format, "qaudit-baseline/1") != 0) {
        snprintf(error, size, "%s: not a qaudit-baseline/1 file (\"format\")", path);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

bool report_alloc_baseline_halves(const char *path, bool *structs, bool *allocations, char *error,
                                  size_t size)
{
    json_t *doc = report_gate_load(path, true, error, size);
    if (doc == NULL)
        return false;
    *structs = json_is_object(json_object_get(doc, "types")) ||
               json_is_object(json_object_get(doc, "functions"));
    *allocations = json_is_object(json_object_get(doc, "allocations"));
    json_decref(doc);
    return true;
}

/* A figure as JSON: whole numbers as integers, others rounded to 10 significant digits. */
static json_t *figure(double v)
{
    if (v == floor(v) && fabs(v) < 9e15)
        return json_integer((json_int_t)v);
    return json_real(v);
}

static json_t *site_json(const struct alloc_site_figures *s, json_t *old)
{
    json_t *o = json_object();
    json_object_set_new(o, "where", json_string(s->where));
    if (s->file != NULL) {
        json_object_set_new(o, "file", json_string(s->file));
        json_object_set_new(o, "line", json_integer(s->line));
    }
    json_object_set_new(o, "allocs", figure(s->allocs));
    json_object_set_new(o, "bytes", figure(s->bytes));
    json_object_set_new(o, "temporary", figure(s->temporary));
    json_object_set_new(o, "live_blocks", figure(s->live_blocks));
    if (s->estimated) {
        json_object_set_new(o, "allocs_range",
                            json_pack("[o,o]", figure(s->allocs_low), figure(s->allocs_high)));
        json_object_set_new(o, "bytes_range",
                            json_pack("[o,o]", figure(s->bytes_low), figure(s->bytes_high)));
    }
    json_t *tolerance = json_object_get(old, "tolerance"); /* a rule's own, written by hand */
    if (tolerance != NULL)
        json_object_set(o, "tolerance", tolerance);
    return o;
}

static json_t *queue_json(const struct alloc_figures *f)
{
    json_t *q = json_object(), *per = json_object();
    for (size_t d = 0; d < sizeof f->per_connection / sizeof f->per_connection[0]; d++)
        if (f->per_connection[d] >= 0) {
            char depth[24];
            snprintf(depth, sizeof depth, "%zu", d);
            json_object_set_new(per, depth, figure(f->per_connection[d]));
        }
    json_object_set_new(q, "allocs_per_connection", per);
    json_object_set_new(q, "depth_one_no_alloc",
                        json_string(report_check_status_names[f->depth_one]));
    return q;
}

/* The section for f; what a rule said by hand (a tolerance) is kept from old. */
static json_t *allocations_json(const struct alloc_figures *f,
                                const struct alloc_gate_settings *settings, json_t *old)
{
    json_t *a = json_object();
    json_object_set_new(a, "program", json_string(f->program));
    if (settings->per > 0)
        json_object_set_new(a, "per", figure(settings->per));
    json_t *tolerance = json_object_get(old, "tolerance");
    if (settings->tolerance >= 0) {
        char text[32];
        snprintf(text, sizeof text, "%g%%", settings->tolerance * 100);
        json_object_set_new(a, "tolerance", json_string(text));
    } else if (json_is_string(tolerance)) {
        json_object_set(a, "tolerance", tolerance);
    }
    json_object_set_new(a, "stacks",
                        json_string(!f->has_sites ? "off"
                                    : f->sampled  ? "sampled"
                                                  : "exact"));
    json_t *totals =
        json_pack("{s:o,s:o,s:o,s:o,s:o}", "allocs", figure(f->allocs), "bytes", figure(f->bytes),
                  "temporary", figure(f->temporary), "peak_live_bytes", figure(f->peak_live_bytes),
                  "live_blocks", figure(f->live_blocks));
    if (f->peak_live_bytes_low != f->peak_live_bytes_high)
        json_object_set_new(totals, "peak_live_bytes_range",
                            json_pack("[o,o]", figure(f->peak_live_bytes_low),
                                      figure(f->peak_live_bytes_high)));
    json_t *old_totals = json_object_get(old, "totals");
    if (json_object_get(old_totals, "tolerance") != NULL)
        json_object_set(totals, "tolerance", json_object_get(old_totals, "tolerance"));
    json_object_set_new(a, "totals", totals);
    json_t *sites = json_object(), *old_sites = json_object_get(old, "sites");
    for (size_t i = 0; i < f->count; i++)
        json_object_set_new(sites, f->sites[i].key,
                            site_json(&f->sites[i], json_object_get(old_sites, f->sites[i].key)));
    json_object_set_new(a, "sites", sites);
    if (f->queue_audit) {
        json_t *queue = queue_json(f),
               *own = json_object_get(json_object_get(old, "queue"), "tolerance");
        if (own != NULL)
            json_object_set(queue, "tolerance", own);
        json_object_set_new(a, "queue", queue);
    }
    return a;
}

bool report_alloc_baseline_write(const struct report *r, const char *path,
                                 const struct alloc_gate_settings *settings, char *error,
                                 size_t size)
{
    json_t *doc = report_gate_load(path, true, error, size);
    if (doc == NULL)
        return false;
    struct alloc_figures f;
    bool ok = report_gate_figures(r, settings->per, &f);
    if (!ok) {
        snprintf(error, size, "out of memory gathering the sites");
    } else {
        json_object_set_new(doc, "allocations",
                            allocations_json(&f, settings, json_object_get(doc, "allocations")));
        ok = baseline_file_save(doc, path, error, size);
        report_gate_figures_free(&f);
    }
    json_decref(doc);
    return ok;
}
