/* The machine rendering, qaudit-report/1 (docs/report-format.md, schema in
 * docs/report-schema.json), and the format dispatch. */
#include <inttypes.h>
#include <string.h>

#include "document.h"
#include "probe/render.h"
#include "reports/render.h"

bool report_format_parse(const char *name, enum report_format *out)
{
    static const char *const names[] = {"text", "md", "json", "html"};
    for (int f = 0; f < 4; f++)
        if (strcmp(name, names[f]) == 0) {
            *out = (enum report_format)f;
            return true;
        }
    return false;
}

static json_t *u64(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *string_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *frame_json(const struct report *r, const struct report_frame *f)
{
    char offset[32];
    snprintf(offset, sizeof offset, "0x%" PRIx64, f->offset);
    const struct report_module *m = f->module != REPORT_NO_MODULE ? &r->modules[f->module] : NULL;
    json_t *locations = json_array();
    for (size_t i = 0; i < f->location_count; i++) {
        const struct report_location *l = &f->locations[i];
        json_array_append_new(locations, json_pack("{s:o, s:o, s:I, s:b}", "function",
                                                   string_or_null(l->function), "file",
                                                   string_or_null(l->file), "line",
                                                   (json_int_t)l->line, "inlined", l->inlined));
    }
    return json_pack("{s:o, s:s, s:b, s:o}", "module", string_or_null(m ? m->path : NULL), "offset",
                     offset, "trusted", m == NULL || !m->mismatched, "locations", locations);
}

static json_t *stack_json(const struct report *r, const struct report_stack *s)
{
    json_t *frames = json_array();
    for (size_t i = 0; i < s->frame_count; i++)
        json_array_append_new(frames, frame_json(r, &s->frames[i]));
    return frames;
}

static json_t *dumps_json(const struct report *r)
{
    json_t *dumps = json_array();
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        json_array_append_new(
            dumps,
            json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:I, s:I}", "pid", (json_int_t)p->pid,
                      "ppid", (json_int_t)p->ppid, "exe", p->exe, "argv", p->argv, "reason",
                      p->reason, "source", p->source, "stacks", p->stacks_mode, "start_time_ns",
                      (json_int_t)p->start_time_ns, "dump_time_ns", (json_int_t)p->dump_time_ns));
    }
    return dumps;
}

static json_t *totals_json(const struct report_totals *t)
{
    json_t *calls = json_object();
    for (int c = 0; c < CALL_COUNT; c++)
        json_object_set_new(calls, report_call_names[c], u64(t->calls[c]));
    json_t *o = json_object();
    json_object_set_new(o, "allocs", u64(t->allocs));
    json_object_set_new(o, "frees", u64(t->frees));
    json_object_set_new(o, "reallocs", u64(t->reallocs));
    json_object_set_new(o, "reallocs_in_place", u64(t->reallocs_in_place));
    json_object_set_new(o, "reallocs_moved", u64(t->reallocs_moved));
    json_object_set_new(o, "aligned_allocs", u64(t->aligned_allocs));
    json_object_set_new(o, "failed_allocs", u64(t->failed_allocs));
    json_object_set_new(o, "bytes_requested", u64(t->bytes_requested));
    json_object_set_new(o, "bytes_usable", u64(t->bytes_usable));
    json_object_set_new(
        o, "waste_bytes",
        u64(t->bytes_usable > t->bytes_requested ? t->bytes_usable - t->bytes_requested : 0));
    json_object_set_new(o, "live_bytes", u64(t->live_bytes));
    json_object_set_new(o, "live_blocks", u64(t->live_blocks));
    json_object_set_new(o, "peak_live_bytes", u64(t->peak_live_bytes));
    json_object_set_new(o, "threads", u64(t->threads));
    json_object_set_new(o, "calls", calls);
    return o;
}

static json_t *counts_json(const struct report_count *c, size_t n, const char *key,
                           const char *count)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, json_pack("{s:I, s:I}", key, (json_int_t)c[i].key, count,
                                              (json_int_t)c[i].count));
    return list;
}

static json_t *peak_json(const struct report_peak *p)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:f, s:f}", "peak_depth", (json_int_t)p->peak_depth,
                     "connections", (json_int_t)p->connections, "allocs", (json_int_t)p->allocs,
                     "bytes", (json_int_t)p->bytes, "allocs_per_connection",
                     report_per_connection(p, p->allocs), "bytes_per_connection",
                     report_per_connection(p, p->bytes));
}

static json_t *queues_json(const struct report_queues *q)
{
    json_t *peaks = json_array();
    for (size_t i = 0; i < q->by_peak_depth_count; i++)
        json_array_append_new(peaks, peak_json(&q->by_peak_depth[i]));
    const struct report_peak *one = report_peak_at(q, 1);
    json_t *o = json_object();
    json_object_set_new(o, "pushes", u64(q->pushes));
    json_object_set_new(o, "pops", u64(q->pops));
    json_object_set_new(o, "discarded", u64(q->discarded));
    json_object_set_new(o, "moved", u64(q->moved));
    json_object_set_new(o, "queued_now", u64(q->queued_now));
    json_object_set_new(o, "grows", u64(q->grows));
    json_object_set_new(o, "shrinks", u64(q->shrinks));
    json_object_set_new(o, "returns_to_inline", u64(q->returns_to_inline));
    json_object_set_new(
        o, "depth_histogram",
        counts_json(q->depth_histogram, q->depth_histogram_count, "depth", "pushes"));
    json_object_set_new(
        o, "allocs_by_depth",
        counts_json(q->allocs_by_depth, q->allocs_by_depth_count, "depth", "allocs"));
    json_object_set_new(o, "by_peak_depth", peaks);
    json_object_set_new(o, "depth_one", one ? peak_json(one) : json_null());
    json_object_set_new(
        o, "connections",
        json_pack("{s:I, s:I}", "opened", (json_int_t)q->opened, "closed", (json_int_t)q->closed));
    json_object_set_new(o, "attribution",
                        json_pack("{s:I, s:I, s:I}", "by_hooks", (json_int_t)q->by_hooks,
                                  "by_stack_patterns", (json_int_t)q->by_stack_patterns, "by_both",
                                  (json_int_t)q->by_both));
    json_object_set_new(o, "events_without_connection", u64(q->events_without_connection));
    json_object_set_new(o, "refused_events", u64(q->refused_events));
    json_object_set_new(o, "records_dropped", u64(q->records_dropped));
    return o;
}

static json_t *sites_json(const struct report *r)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->site_count; i++) {
        const struct report_site *s = &r->sites[i];
        json_array_append_new(
            list,
            json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "id", (json_int_t)i + 1,
                      "allocs", (json_int_t)s->allocs, "frees", (json_int_t)s->frees, "bytes",
                      (json_int_t)s->bytes, "live_bytes", (json_int_t)s->live_bytes,
                      "peak_live_bytes", (json_int_t)s->peak_live_bytes, "never_written_bytes",
                      (json_int_t)s->never_written_bytes, "queue_allocs",
                      (json_int_t)s->queue_allocs, "frames", stack_json(r, &s->stack)));
    }
    return list;
}

static json_t *events_json(const struct report *r, const struct report_event *e, size_t n,
                           const char *extra)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            list, json_pack("{s:I, s:I, s:I, s:o}", "pid", (json_int_t)e[i].pid, extra,
                            (json_int_t)(extra[0] == 'd' ? e[i].depth : e[i].candidate), "size",
                            (json_int_t)e[i].size, "frames", stack_json(r, &e[i].stack)));
    return list;
}

static json_t *checks_json(const struct report *r)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->check_count; i++) {
        const struct report_check *c = &r->checks[i];
        json_array_append_new(list, json_pack("{s:s, s:b, s:s, s:i, s:i}", "name", c->name,
                                              "passed", report_check_passed(c), "detail", c->detail,
                                              "dumps", (int)c->dumps, "failed", (int)c->failed));
    }
    return list;
}

static json_t *sizes_json(const struct report *r)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->requested_count; i++)
        json_array_append_new(list, json_pack("{s:I, s:I, s:I}", "from",
                                              (json_int_t)r->requested_sizes[i].from, "to",
                                              (json_int_t)r->requested_sizes[i].to, "count",
                                              (json_int_t)r->requested_sizes[i].count));
    return list;
}

static json_t *modules_json(const struct report *r)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->module_count; i++) {
        const struct report_module *m = &r->modules[i];
        json_array_append_new(list,
                              json_pack("{s:s, s:s, s:o, s:b, s:b}", "path", m->path, "build_id",
                                        m->build_id, "file", string_or_null(m->file), "missing",
                                        m->missing, "build_id_matches", !m->mismatched));
    }
    return list;
}

static json_t *precision_json(const struct report_precision *p)
{
    json_t *deepbind = json_array();
    for (size_t i = 0; i < p->deepbind_count; i++)
        json_array_append_new(deepbind, json_string(p->deepbind_libraries[i]));
    return json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "exact", p->exact,
                     "peak_live_bytes_within", (json_int_t)p->peak_live_bytes_within,
                     "blocks_untracked", (json_int_t)p->blocks_untracked, "sites_dropped",
                     (json_int_t)p->sites_dropped, "stacks_truncated",
                     (json_int_t)p->stacks_truncated, "usable_sizes_dropped",
                     (json_int_t)p->usable_sizes_dropped, "modules_dropped",
                     (json_int_t)p->modules_dropped, "never_written_unattributed",
                     (json_int_t)p->never_written_unattributed, "deepbind_libraries", deepbind);
}

json_t *report_json(const struct report *r, const struct report_options *o)
{
    json_t *layouts = json_array();
    for (size_t i = 0; i < o->layout_count; i++)
        json_array_append_new(layouts, layout_type_json(o->layouts[i]));
    json_t *doc = json_object();
    json_object_set_new(doc, "format", json_string("qaudit-report/1"));
    json_object_set_new(doc, "dumps", dumps_json(r));
    json_object_set_new(doc, "superseded", u64(r->superseded));
    json_object_set_new(doc, "passed", json_boolean(report_passed(r)));
    json_object_set_new(doc, "checks", checks_json(r));
    json_object_set_new(doc, "totals", totals_json(&r->totals));
    json_object_set_new(doc, "requested_sizes", sizes_json(r));
    json_object_set_new(doc, "usable_sizes",
                        counts_json(r->usable_sizes, r->usable_count, "usable", "count"));
    json_object_set_new(doc, "queues", queues_json(&r->queues));
    json_object_set_new(doc, "symbolized", json_boolean(r->symbolized));
    json_object_set_new(doc, "modules", modules_json(r));
    json_object_set_new(doc, "sites", sites_json(r));
    json_object_set_new(doc, "depth_one_violations",
                        events_json(r, r->violations, r->violation_count, "depth"));
    json_object_set_new(doc, "injected_failures",
                        json_pack("{s:I, s:I, s:o}", "candidates",
                                  (json_int_t)r->failure_candidates, "injected",
                                  (json_int_t)r->failures_injected, "first",
                                  events_json(r, r->failures, r->failure_count, "candidate")));
    json_object_set_new(doc, "layouts", layouts);
    json_object_set_new(doc, "precision", precision_json(&r->precision));
    return doc;
}

void report_render(FILE *out, const struct report *r, enum report_format format,
                   const struct report_options *options)
{
    if (format == REPORT_JSON) {
        json_t *doc = report_json(r, options);
        json_dumpf(doc, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        fputc('\n', out);
        json_decref(doc);
        return;
    }
    struct document d = {0};
    report_build_document(&d, r, options);
    if (format == REPORT_TEXT)
        render_text(out, &d);
    else if (format == REPORT_MARKDOWN)
        render_markdown(out, &d);
    else
        render_html(out, &d);
    doc_free(&d);
}
