/* The machine rendering, qaudit-report/1 (docs/report-format.md, schema in
 * docs/report-schema.json), and the format dispatch. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports_render.h"
#include "probe/layout_render.h"
#include "probe/reorder.h"
#include "reports/render.h"

bool report_format_parse(const char *name, enum report_format *out)
{
    static const char *const names[] = {"text", "md", "json", "html", "pprof", "folded"};
    for (int f = 0; f < 6; f++)
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

/* A figure that may be an estimate, as the nearest integer. */
static json_t *rounded(double v)
{
    return json_integer((json_int_t)llround(v));
}

static json_t *sampling_json(const struct report_process *p)
{
    if (p->sampling == SAMPLING_NONE)
        return json_null();
    return json_pack("{s:s, s:I, s:b, s:s}", "by",
                     p->sampling == SAMPLING_BYTES ? "bytes" : "allocations", "every",
                     (json_int_t)p->sample_every, "inferred", p->sampling_inferred, "intervals",
                     p->exponential ? "exponential"
                     : p->geometric ? "geometric"
                                    : "fixed");
}

static json_t *dumps_json(const struct report *r)
{
    json_t *dumps = json_array();
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        json_t *dump =
            json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:I, s:I}", "pid", (json_int_t)p->pid,
                      "ppid", (json_int_t)p->ppid, "exe", p->exe, "argv", p->argv, "reason",
                      p->reason, "source", p->source, "stacks", p->stacks_mode, "start_time_ns",
                      (json_int_t)p->start_time_ns, "dump_time_ns", (json_int_t)p->dump_time_ns);
        json_object_set_new(dump, "sequence", p->has_sequence ? u64(p->sequence) : json_null());
        json_object_set_new(dump, "final", json_boolean(p->final));
        json_object_set_new(dump, "end_signal", string_or_null(p->end_signal));
        json_object_set_new(dump, "sampling", sampling_json(p));
        const struct report_inherited *in = &p->inherited;
        json_object_set_new(dump, "forked_from",
                            p->forked
                                ? json_pack("{s:I, s:I}", "pid", (json_int_t)p->forked_from_pid,
                                            "start_time_ns", (json_int_t)p->forked_from_start_ns)
                                : json_null());
        json_object_set_new(dump, "inherited",
                            p->forked
                                ? json_pack("{s:I, s:I, s:{s:I, s:I}, s:I}", "blocks",
                                            (json_int_t)in->blocks, "bytes", (json_int_t)in->bytes,
                                            "freed", "blocks", (json_int_t)in->freed_blocks,
                                            "bytes", (json_int_t)in->freed_bytes, "reallocated",
                                            (json_int_t)in->reallocated)
                                : json_null());
        json_object_set_new(
            dump, "python",
            !report_process_is_python(p)
                ? json_null()
                : json_pack("{s:b, s:I, s:I, s:o}", "objects_counted",
                            report_python_objects_counted(p), "small_allocations",
                            (json_int_t)p->small_allocs, "allocation_calls",
                            (json_int_t)p->alloc_calls, "pythonmalloc",
                            p->pythonmalloc ? json_string(p->pythonmalloc) : json_null()));
        json_object_set_new(dump, "runtime",
                            p->runtime == 0
                                ? json_null()
                                : json_pack("{s:s, s:s}", "name", report_runtime_name(p->runtime),
                                            "objects", report_runtime_objects(p->runtime)));
        json_array_append_new(dumps, dump);
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
    json_object_set_new(o, "temporary", t->has_temporary ? u64(t->temporary) : json_null());
    json_object_set_new(o, "calls", calls);
    const struct report_inherited *in = &t->inherited;
    if (in->processes > 0) /* forked children: what they inherited at their forks */
        json_object_set_new(o, "inherited",
                            json_pack("{s:I, s:I, s:I, s:{s:I, s:I}, s:I, s:{s:I, s:I}}",
                                      "processes", (json_int_t)in->processes, "blocks",
                                      (json_int_t)in->blocks, "bytes", (json_int_t)in->bytes,
                                      "freed", "blocks", (json_int_t)in->freed_blocks, "bytes",
                                      (json_int_t)in->freed_bytes, "reallocated",
                                      (json_int_t)in->reallocated, "unattributed", "blocks",
                                      (json_int_t)in->unattributed_blocks, "bytes",
                                      (json_int_t)in->unattributed_bytes));
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

static json_t *range_json(double low, double high)
{
    return json_pack("[o, o]", rounded(low), rounded(high));
}

/* A site's best figures (estimates for a sampled site), and what they were made from. */
static json_t *site_json(const struct report *r, const struct report_site *s, size_t i)
{
    const struct report_estimate *e = &s->est;
    char where[4096];
    report_site_where(r, s, true, where, sizeof where);
    json_t *o = json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)i + 1,
                          "precision", s->estimated ? "estimated" : "exact", "allocs",
                          rounded(e->allocs), "frees", rounded(e->frees), "bytes",
                          rounded(e->bytes), "live_bytes", rounded(e->live_bytes), "live_blocks",
                          rounded(e->live_blocks), "peak_live_bytes", rounded(e->peak_live_bytes),
                          "temporary", r->temporary_missing ? json_null() : rounded(e->temporary));
    json_object_set_new(o, "range",
                        json_pack("{s:o, s:o, s:o}", "allocs",
                                  range_json(e->allocs_low, e->allocs_high), "bytes",
                                  range_json(e->bytes_low, e->bytes_high), "live_bytes",
                                  range_json(e->live_low, e->live_high)));
    json_object_set_new(
        o, "sampled",
        s->estimated ? json_pack("{s:I, s:I, s:I, s:I, s:I}", "allocs", (json_int_t)s->allocs,
                                 "frees", (json_int_t)s->frees, "bytes", (json_int_t)s->bytes,
                                 "live_bytes", (json_int_t)s->live_bytes, "peak_live_bytes",
                                 (json_int_t)s->peak_live_bytes)
                     : json_null());
    json_object_set_new(o, "never_written_bytes", u64(s->never_written_bytes));
    json_object_set_new(o, "queue_allocs", u64(s->queue_allocs));
    json_object_set_new(o, "where", json_string(where));
    json_object_set_new(o, "folded_frames", u64(s->folded));
    json_object_set_new(o, "wrapper", string_or_null(s->wrapper));
    json_object_set_new(o, "held_by_design", string_or_null(s->by_design));
    json_object_set_new(o, "frames", stack_json(r, &s->stack));
    return o;
}

/* The wrappers recognised from the stacks: their names and how many callers they serve. */
static json_t *wrappers_json(const struct report *r)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->wrapper_count; i++)
        json_array_append_new(list, json_pack("{s:s?, s:I}", "function", r->wrappers[i].name,
                                              "callers", (json_int_t)r->wrappers[i].callers));
    return list;
}

static json_t *sites_json(const struct report *r)
{
    json_t *list = json_array();
    for (size_t i = 0; i < r->site_count; i++)
        json_array_append_new(list, site_json(r, &r->sites[i], i));
    return list;
}

static json_t *coverage_json(const struct report *r)
{
    double allocs, bytes;
    report_coverage(r, &allocs, &bytes);
    double calls = (double)(r->totals.allocs + r->totals.reallocs);
    double requested = (double)r->totals.bytes_requested;
    return json_pack("{s:o, s:I, s:f, s:o, s:I, s:f}", "site_allocs", rounded(allocs),
                     "allocs_total", (json_int_t)(r->totals.allocs + r->totals.reallocs),
                     "allocs_share", calls > 0 ? allocs / calls : 0.0, "site_bytes", rounded(bytes),
                     "bytes_total", (json_int_t)r->totals.bytes_requested, "bytes_share",
                     requested > 0 ? bytes / requested : 0.0);
}

/* Sites by bytes still allocated at exit (or at the snapshot): the leaks first. */
static json_t *live_json(const struct report *r)
{
    const struct report_site **ranked = calloc(r->site_count + 1, sizeof *ranked);
    size_t n = ranked ? report_rank_sites(r, RANK_LIVE, ranked) : 0;
    double whole = report_live_share_whole(r), rounding = report_live_rounding_bytes(r);
    json_t *sites = json_array(), *by_design = json_array();
    double design_bytes = 0, design_blocks = 0;
    for (size_t i = 0; i < n; i++) {
        const struct report_site *s = ranked[i];
        json_array_append_new(sites, json_pack("{s:I, s:o, s:o, s:f, s:s, s:o}", "id",
                                               (json_int_t)(s - r->sites) + 1, "live_bytes",
                                               rounded(s->est.live_bytes), "live_blocks",
                                               rounded(s->est.live_blocks), "share",
                                               whole > 0 ? s->est.live_bytes / whole : 0.0,
                                               "precision", s->estimated ? "estimated" : "exact",
                                               "held_by_design", string_or_null(s->by_design)));
        if (s->by_design == NULL)
            continue;
        design_bytes += s->est.live_bytes;
        design_blocks += s->est.live_blocks;
        json_array_append_new(by_design, json_integer((json_int_t)(s - r->sites) + 1));
    }
    free(ranked);
    struct unsited u;
    report_live_without_site(r, &u);
    char command[4096];
    report_attribute_command(r, command, sizeof command);
    json_t *without = json_pack("{s:o, s:o, s:b, s:o}", "blocks", rounded(u.blocks),
                                "bytes_at_most", rounded(u.bytes), "estimated", u.estimated,
                                "command", u.every_site ? json_null() : json_string(command));
    return json_pack("{s:s, s:I, s:I, s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o}}", "at",
                     report_live_scope_names[report_live_scope(r)], "bytes",
                     (json_int_t)r->totals.live_bytes, "blocks", (json_int_t)r->totals.live_blocks,
                     "sites", sites, "share_of", rounded(whole), "rounding_bytes",
                     rounding >= 0 ? rounded(rounding) : json_null(), "without_site", without,
                     "held_by_design", "bytes", rounded(design_bytes), "blocks",
                     rounded(design_blocks), "sites", by_design);
}

static json_t *temporary_json(const struct report *r)
{
    if (r->temporary_missing)
        return json_pack("{s:b, s:n, s:[]}", "counted", false, "total", "sites");
    const struct report_site **ranked = calloc(r->site_count + 1, sizeof *ranked);
    size_t n = ranked ? report_rank_sites(r, RANK_TEMPORARY, ranked) : 0;
    json_t *sites = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(sites,
                              json_pack("{s:I, s:o}", "id", (json_int_t)(ranked[i] - r->sites) + 1,
                                        "temporary", rounded(ranked[i]->est.temporary)));
    free(ranked);
    return json_pack("{s:b, s:I, s:o}", "counted", true, "total", (json_int_t)r->totals.temporary,
                     "sites", sites);
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
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:b, s:s, s:i, s:i, s:i}", "name", c->name, "status",
                            report_check_status_names[report_check_status(c)], "passed",
                            report_check_passed(c), "detail", c->detail, "dumps", (int)c->dumps,
                            "failed", (int)c->failed, "not_applicable", (int)c->not_applicable));
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
    struct debug_hint hints[64];
    size_t n = report_debug_hints(r, 0, hints, 64);
    json_t *list = json_array();
    for (size_t i = 0; i < r->module_count; i++) {
        const struct report_module *m = &r->modules[i];
        const struct debug_hint *hint = NULL;
        for (size_t h = 0; h < n; h++)
            hint = hints[h].module == i ? &hints[h] : hint;
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:o, s:b, s:b, s:I, s:o}", "path", m->path, "build_id",
                            m->build_id, "file", string_or_null(m->file), "missing", m->missing,
                            "build_id_matches", !m->mismatched, "frames_without_symbols",
                            (json_int_t)(hint ? hint->frames : 0), "debug_package",
                            hint && hint->debug[0] ? json_string(hint->debug) : json_null()));
    }
    return list;
}

/* What the other formats put on top (content_summary.c), one sentence an item. */
static json_t *summary_json(const struct report *r, const struct report_options *o)
{
    struct document d = {0};
    report_build_document(&d, r, o);
    json_t *items = json_array();
    for (size_t i = 0; i < d.count; i++)
        if (d.blocks[i].kind == BLOCK_LIST && d.blocks[i].tone != TONE_NONE)
            for (size_t l = 0; l < d.blocks[i].line_count; l++)
                json_array_append_new(items, json_string(d.blocks[i].lines[l]));
    report_doc_free(&d);
    return items;
}

static json_t *strings_json(char *const *list, size_t n)
{
    json_t *array = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(array, json_string(list[i] ? list[i] : "?"));
    return array;
}

static json_t *precision_counters(const struct report_precision *p)
{
    json_t *deepbind = strings_json(p->deepbind_libraries, p->deepbind_count);
    return json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "exact", p->exact,
                     "peak_live_bytes_within", (json_int_t)p->peak_live_bytes_within,
                     "blocks_untracked", (json_int_t)p->blocks_untracked, "sites_dropped",
                     (json_int_t)p->sites_dropped, "stacks_truncated",
                     (json_int_t)p->stacks_truncated, "usable_sizes_dropped",
                     (json_int_t)p->usable_sizes_dropped, "modules_dropped",
                     (json_int_t)p->modules_dropped, "never_written_unattributed",
                     (json_int_t)p->never_written_unattributed, "deepbind_libraries", deepbind);
}

static json_t *precision_json(const struct report *r)
{
    const struct report_precision *p = &r->precision;
    json_t *o = precision_counters(p);
    json_object_set_new(o, "counts", json_string(r->trust.partial ? "partial" : "exact"));
    json_object_set_new(o, "notes", strings_json(r->trust.notes, r->trust.note_count));
    json_object_set_new(o, "uninterposed_allocators",
                        strings_json(p->uninterposed_allocators, p->uninterposed_count));
    json_object_set_new(o, "unreachable_allocators",
                        strings_json(p->unreachable_allocators, p->unreachable_count));
    json_object_set_new(o, "unexplained_anonymous", u64(p->unexplained_anonymous));
    json_object_set_new(o, "modules_unknown", u64(p->modules_unknown));
    return o;
}

/* A layout as qaudit layout --format json writes it, with "reorganized": the size and classes
 * of its members sorted by alignment when that is smaller (qaudit layout --reorganize), else
 * null. */
static json_t *layout_with_reorganized(const struct layout_type *t)
{
    json_t *layout = layout_type_json(t);
    struct layout_reorganized r;
    json_t *reorganized = json_null();
    if (layout_reorganize(t, &r) && r.smaller) {
        json_decref(reorganized);
        reorganized = json_object();
        json_object_set_new(reorganized, "size", u64(r.type.size));
        json_object_set_new(reorganized, "classes", layout_classes_json(r.type.size));
    }
    layout_reorganized_free(&r);
    json_object_set_new(layout, "reorganized", reorganized);
    return layout;
}

json_t *report_json(const struct report *r, const struct report_options *o)
{
    json_t *layouts = json_array();
    for (size_t i = 0; i < o->layout_count; i++)
        json_array_append_new(layouts, layout_with_reorganized(o->layouts[i]));
    json_t *doc = json_object();
    json_object_set_new(doc, "format", json_string("qaudit-report/1"));
    json_object_set_new(doc, "dumps", dumps_json(r));
    json_object_set_new(doc, "superseded", u64(r->superseded));
    json_object_set_new(doc, "duplicates", u64(r->duplicates));
    json_object_set_new(doc, "input_notes", strings_json(r->input_notes, r->input_note_count));
    unsigned tally[3];
    report_check_tally(r, tally);
    json_object_set_new(doc, "summary", summary_json(r, o));
    json_object_set_new(doc, "queue_audit", json_boolean(report_queue_audit(r)));
    json_object_set_new(doc, "passed", json_boolean(report_passed(r)));
    json_object_set_new(doc, "checks_summary",
                        json_pack("{s:i, s:i, s:i}", "pass", (int)tally[CHECK_PASS], "fail",
                                  (int)tally[CHECK_FAIL], "n/a", (int)tally[CHECK_NA]));
    json_object_set_new(doc, "checks", checks_json(r));
    json_object_set_new(doc, "totals", totals_json(&r->totals));
    json_object_set_new(doc, "requested_sizes", sizes_json(r));
    json_object_set_new(doc, "usable_sizes",
                        counts_json(r->usable_sizes, r->usable_count, "usable", "count"));
    json_object_set_new(doc, "queues", queues_json(&r->queues));
    json_object_set_new(doc, "symbolized", json_boolean(r->symbolized));
    json_object_set_new(doc, "modules", modules_json(r));
    json_object_set_new(doc, "skip", strings_json(r->skip, r->skip_count));
    json_object_set_new(doc, "folded_sites", u64(r->folded_sites));
    json_object_set_new(doc, "wrappers_recognised", wrappers_json(r));
    double shallow = report_shallow_share(r);
    json_object_set_new(doc, "shallow_stacks", shallow > 0 ? json_real(shallow) : json_null());
    json_object_set_new(doc, "coverage", coverage_json(r));
    json_object_set_new(doc, "sites", sites_json(r));
    json_object_set_new(doc, "live", live_json(r));
    json_object_set_new(doc, "temporary", temporary_json(r));
    json_object_set_new(doc, "timeline", report_timeline_json(r)); /* timeline_series.c */
    json_object_set_new(doc, "depth_one_violations",
                        events_json(r, r->violations, r->violation_count, "depth"));
    json_object_set_new(doc, "injected_failures",
                        json_pack("{s:I, s:I, s:o}", "candidates",
                                  (json_int_t)r->failure_candidates, "injected",
                                  (json_int_t)r->failures_injected, "first",
                                  events_json(r, r->failures, r->failure_count, "candidate")));
    json_object_set_new(doc, "layouts", layouts);
    json_object_set_new(doc, "layout_note", string_or_null(o->layout_note));
    json_object_set_new(doc, "precision", precision_json(r));
    return doc;
}

void report_render_json(FILE *out, const struct report *r, const struct report_options *options)
{
    json_t *doc = report_json(r, options);
    json_dumpf(doc, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(doc);
}
