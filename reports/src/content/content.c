/* What a report says, in order: the dumps, what to look at first, the checks, totals, the queue
 * and its violations (queue audits only), the top sites, what is live at exit, temporary
 * allocations, sizes against classes, injected failures, bytes never written, layouts,
 * precision. */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "reports_content.h"
#include "probe/classes.h"
#include "probe/layout_render.h"
#include "probe/reorder.h"
#include "reports/render.h"

/* The dumps listed by name: a build or a shell loop leaves hundreds, and the table would push
 * everything else pages down. The rest are counted by program; the JSON has every one. */
#define DUMPS_LISTED 10
#define PROGRAMS_COUNTED 4

/* "/bin/true 300, bash 292, seq 1": the dumps of order[first..] (indexes into r->processes), by
 * executable. */
static void dumps_not_listed(struct document *d, const struct report *r, const size_t *order,
                             size_t first)
{
    char counted[256] = "";
    size_t used = 0, groups = 0;
    for (size_t i = first; i < r->process_count; i++) {
        const char *exe = r->processes[order[i]].exe;
        bool seen = false;
        for (size_t j = first; j < i && !seen; j++)
            seen = strcmp(r->processes[order[j]].exe, exe) == 0;
        if (seen || groups++ >= PROGRAMS_COUNTED)
            continue;
        size_t n = 0;
        for (size_t j = i; j < r->process_count; j++)
            n += strcmp(r->processes[order[j]].exe, exe) == 0;
        char count[CELL];
        used += (size_t)snprintf(counted + used, used < sizeof counted ? sizeof counted - used : 0,
                                 "%s%s %s", used ? ", " : "", exe, report_count_cell(count, n));
        if (used >= sizeof counted)
            used = sizeof counted - 1;
    }
    report_doc_paragraph(d, "And %zu more dump%s: %s%s (the JSON report lists each).",
                         r->process_count - first, r->process_count - first == 1 ? "" : "s",
                         counted, groups > PROGRAMS_COUNTED ? ", ..." : "");
}

/* The command of a dump, one line that fits its column: the program's base name, then its
 * arguments (a shim's or a shell's `-c` script would wrap over five lines of the table). The
 * JSON report keeps the command and the executable's path whole. */
#define COMMAND_SHOWN 34

static void command_cell(char *out, size_t size, const struct report_process *p)
{
    const char *command = p->argv[0] ? p->argv : p->exe ? p->exe : "";
    const char *arguments = strchr(command, ' ');
    char first[PATH_MAX];
    snprintf(first, sizeof first, "%.*s",
             (int)(arguments ? arguments - command : (long)strlen(command)), command);
    char whole[COMMAND_SHOWN + 2];
    snprintf(whole, sizeof whole, "%s%s", report_path_base_name(first), arguments ? arguments : "");
    if (strlen(whole) <= COMMAND_SHOWN)
        snprintf(out, size, "%s", whole);
    else
        snprintf(out, size, "%.*s...", COMMAND_SHOWN - 3, whole);
}

static void dump_row(struct document *d, const struct report_process *p)
{
    char pid[CELL], command[COMMAND_SHOWN + 1];
    snprintf(pid, sizeof pid, "%" PRIu64, p->pid);
    char reason[CELL], stacks[96];
    snprintf(reason, sizeof reason, "%s%s%s%s", p->reason, p->end_signal ? " (" : "",
             p->end_signal ? p->end_signal : "", p->end_signal ? ")" : "");
    report_process_stacks(p, stacks, sizeof stacks);
    command_cell(command, sizeof command, p);
    report_doc_row(d, (const char *const[]){pid, command, p->source, reason, stacks});
}

/* The dumps in the order a reader wants them: the leading program's first (a run through a
 * pyenv shim holds python's one dump among 70 of bash, env and readlink), then the others as
 * given. Fills order with indexes into r->processes; the listed ones come first in it. */
static void dumps_in_order(const struct report *r, size_t *order)
{
    uint64_t lead = report_lead_program(r, NULL);
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->process_count; i++) {
            bool of_lead = lead != 0 && report_program_id(r->processes[i].exe) == lead;
            if (of_lead == (pass == 0))
                order[n++] = i;
        }
}

static void section_dumps(struct document *d, const struct report *r)
{
    report_doc_heading(d, 1, "qaudit allocation report");
    report_doc_table(d,
                     (const char *const[]){"pid", "program", "dump", "written at", "stacks", NULL});
    size_t listed = r->process_count > DUMPS_LISTED ? DUMPS_LISTED : r->process_count;
    size_t *order = calloc(r->process_count + 1, sizeof *order);
    if (order == NULL)
        listed = 0;
    else
        dumps_in_order(r, order);
    for (size_t i = 0; i < listed; i++)
        dump_row(d, &r->processes[order[i]]);
    if (order != NULL && listed < r->process_count)
        dumps_not_listed(d, r, order, listed);
    free(order);
    if (r->superseded > 0)
        report_doc_paragraph(
            d,
            "%zu earlier snapshot%s superseded by a later dump of the same process "
            "and not counted twice.",
            r->superseded, r->superseded == 1 ? " was" : "s were");
    for (size_t i = 0; i < r->input_note_count; i++)
        report_doc_paragraph(d, "%s", r->input_notes[i]);
}

static void section_checks(struct document *d, const struct report *r)
{
    report_doc_heading(d, 2, "Checks");
    if (r->check_count == 0) {
        report_doc_paragraph(d, "The dumps hold no checks.");
        return;
    }
    unsigned tally[3];
    report_check_tally(r, tally);
    report_doc_paragraph(d, "%zu checks: %u passed, %u failed, %u n/a (could not apply).",
                         r->check_count, tally[CHECK_PASS], tally[CHECK_FAIL], tally[CHECK_NA]);
    static const char *const results[] = {"PASS", "FAIL", "N/A"};
    report_doc_table(d, (const char *const[]){"check", "result", "detail", NULL});
    for (size_t i = 0; i < r->check_count; i++) {
        const struct report_check *c = &r->checks[i];
        report_doc_row(d,
                       (const char *const[]){c->name, results[report_check_status(c)], c->detail});
    }
}

static void row_count(struct document *d, const char *what, uint64_t n)
{
    char v[CELL];
    report_doc_row(d, (const char *const[]){what, report_count_cell(v, n)});
}

static void row_bytes(struct document *d, const char *what, uint64_t n)
{
    char v[CELL];
    report_doc_row(d, (const char *const[]){what, report_fmt_bytes(v, sizeof v, n)});
}

/* Each forked child's inheritance, apart from its own calls (the totals count those); at most
 * FORKS_SAID of them, the JSON has every one. */
#define FORKS_SAID 10

static void forked_processes(struct document *d, const struct report *r)
{
    size_t forked = 0;
    for (size_t i = 0; i < r->process_count; i++)
        forked += r->processes[i].forked;
    if (forked == 0)
        return;
    report_doc_paragraph(d, "Forked processes: what each inherited at its fork, apart from what it "
                            "allocated itself (the figures above count its own calls; live bytes "
                            "include what it still holds of its inheritance):");
    report_doc_lines(d);
    size_t said = 0;
    for (size_t i = 0; i < r->process_count && said < FORKS_SAID; i++) {
        const struct report_process *p = &r->processes[i];
        if (!p->forked)
            continue;
        said++;
        const struct report_inherited *in = &p->inherited;
        uint64_t freed = in->freed_blocks < in->blocks ? in->freed_blocks : in->blocks;
        char a[CELL], b[CELL], c[CELL], e[CELL], f[CELL];
        report_doc_line(
            d,
            "pid %" PRIu64 " (forked from pid %" PRIu64 "): inherited %s in %s blocks; freed "
            "%s of them (%s, %s by realloc); %s still held",
            p->pid, p->forked_from_pid, report_fmt_bytes(a, sizeof a, in->bytes),
            report_count_cell(b, in->blocks), report_count_cell(c, freed),
            report_fmt_bytes(e, sizeof e, in->freed_bytes), report_count_cell(f, in->reallocated),
            report_fmt_count((char[CELL]){0}, CELL, in->blocks - freed));
    }
    if (forked > said)
        report_doc_line(d, "and %zu more forked processes (the JSON report lists each)",
                        forked - said);
}

static void section_totals(struct document *d, const struct report *r)
{
    const struct report_totals *t = &r->totals;
    report_doc_heading(d, 2, "Totals");
    report_doc_table(d, (const char *const[]){"what", "value", NULL});
    row_count(d, "allocations", t->allocs);
    row_count(d, "frees", t->frees);
    char v[2 * CELL], a[CELL], b[CELL], c[CELL];
    snprintf(v, sizeof v, "%s (in place %s, moved %s)", report_count_cell(a, t->reallocs),
             report_count_cell(b, t->reallocs_in_place), report_count_cell(c, t->reallocs_moved));
    report_doc_row(d, (const char *const[]){"reallocs", v});
    row_count(d, "aligned allocations", t->aligned_allocs);
    row_count(d, "injected failures", t->failed_allocs);
    row_count(d, "threads that allocated", t->threads);
    row_bytes(d, "bytes requested", t->bytes_requested);
    row_bytes(d, "bytes usable (what the allocator gave)", t->bytes_usable);
    uint64_t waste =
        t->bytes_usable > t->bytes_requested ? t->bytes_usable - t->bytes_requested : 0;
    snprintf(v, sizeof v, "%s (%.1f %% of usable)", report_fmt_bytes(a, sizeof a, waste),
             t->bytes_usable ? 100.0 * (double)waste / (double)t->bytes_usable : 0.0);
    report_doc_row(d, (const char *const[]){"waste (usable - requested)", v});
    snprintf(v, sizeof v, "%s%s", report_fmt_bytes(a, sizeof a, t->peak_live_bytes),
             r->process_count > 1 ? " (sum of the processes' peaks)" : "");
    report_doc_row(d, (const char *const[]){"peak live bytes", v});
    snprintf(v, sizeof v, "%s in %s blocks", report_fmt_bytes(a, sizeof a, t->live_bytes),
             report_count_cell(b, t->live_blocks));
    report_doc_row(d, (const char *const[]){"live at the dump", v});
    if (!r->temporary_missing) {
        snprintf(v, sizeof v, "%s (freed before the thread's next allocation or free)",
                 report_count_cell(a, t->temporary));
        report_doc_row(d, (const char *const[]){"temporary allocations", v});
    }
    const struct report_inherited *in = &t->inherited;
    if (in->processes > 0) {
        snprintf(v, sizeof v, "%s in %s blocks, by %s forked process%s",
                 report_fmt_bytes(a, sizeof a, in->bytes), report_count_cell(b, in->blocks),
                 report_count_cell(c, in->processes), in->processes == 1 ? "" : "es");
        report_doc_row(d, (const char *const[]){"inherited at fork", v});
        snprintf(v, sizeof v, "%s in %s blocks (%s taken over by realloc)",
                 report_fmt_bytes(a, sizeof a, in->freed_bytes),
                 report_count_cell(b, in->freed_blocks), report_count_cell(c, in->reallocated));
        report_doc_row(d, (const char *const[]){"inherited, freed by them", v});
    }
    char calls[512] = "";
    size_t used = 0;
    for (int i = 0; i < CALL_COUNT && used < sizeof calls; i++)
        if (t->calls[i] > 0) {
            int n = snprintf(calls + used, sizeof calls - used, "%s%s %s", used ? ", " : "",
                             report_call_names[i], report_count_cell(a, t->calls[i]));
            used += n > 0 ? (size_t)n : 0;
        }
    report_doc_paragraph(d, "Calls: %s.", used ? calls : "none");
    forked_processes(d, r);
}

static int by_peak(const void *a, const void *b)
{
    const struct report_peak *x = a, *y = b;
    return x->peak_depth < y->peak_depth ? -1 : x->peak_depth > y->peak_depth;
}

static void section_queue_depths(struct document *d, const struct report_queues *q)
{
    char a[CELL], b[CELL], c[CELL], e[CELL];
    report_doc_heading(d, 2, "Queue");
    if (q->pushes == 0 && q->opened == 0) {
        report_doc_paragraph(d, "No queue events: the program does not call qaudit_hook, or no "
                                "connection pushed anything.");
        return;
    }
    report_doc_paragraph(d,
                         "%s pushes, %s pops, %s discarded at clear or destroy, %s still queued.",
                         report_count_cell(a, q->pushes), report_count_cell(b, q->pops),
                         report_count_cell(c, q->discarded), report_count_cell(e, q->queued_now));
    report_doc_paragraph(
        d,
        "Storage: %s grows, %s shrinks, %s returns to the inline slots. Connections: "
        "%s opened, %s closed.",
        report_count_cell(a, q->grows), report_count_cell(b, q->shrinks),
        report_count_cell(c, q->returns_to_inline), report_count_cell(e, q->opened),
        report_fmt_count((char[CELL]){0}, CELL, q->closed));
    report_doc_chart(d, "Queue depth after each push", "pushes", false);
    report_doc_chart_axis(d, "queue depth after the push");
    for (size_t i = 0; i < q->depth_histogram_count; i++) {
        const struct report_count *h = &q->depth_histogram[i];
        snprintf(a, sizeof a, "%" PRIu64 "%s", h->key,
                 i + 1 == q->depth_histogram_count && h->key >= 65 ? "+" : "");
        report_doc_bar(d, a, (double)h->count);
    }
}

static void section_per_connection(struct document *d, const struct report_queues *q)
{
    if (q->by_peak_depth_count == 0)
        return;
    struct report_peak *peaks = malloc(q->by_peak_depth_count * sizeof *peaks);
    if (peaks == NULL)
        return;
    memcpy(peaks, q->by_peak_depth, q->by_peak_depth_count * sizeof *peaks);
    qsort(peaks, q->by_peak_depth_count, sizeof *peaks, by_peak);
    report_doc_heading(d, 2, "Allocations per connection by peak depth");
    report_doc_table(d, (const char *const[]){"peak depth", "connections", "allocations", "bytes",
                                              "allocations per connection", "bytes per connection",
                                              NULL});
    for (size_t i = 0; i < q->by_peak_depth_count; i++) {
        const struct report_peak *p = &peaks[i];
        char depth[CELL], conns[CELL], allocs[CELL], bytes[CELL], apc[CELL], bpc[CELL];
        snprintf(depth, sizeof depth, "%" PRIu64, p->peak_depth);
        snprintf(apc, sizeof apc, "%.2f", report_per_connection(p, p->allocs));
        snprintf(bpc, sizeof bpc, "%.1f", report_per_connection(p, p->bytes));
        report_doc_row(d, (const char *const[]){depth, report_count_cell(conns, p->connections),
                                                report_count_cell(allocs, p->allocs),
                                                report_count_cell(bytes, p->bytes), apc, bpc});
    }
    report_doc_chart(d, "Allocations per connection by peak depth", "allocations per connection",
                     true);
    report_doc_chart_axis(d, "connections by peak depth");
    for (size_t i = 0; i < q->by_peak_depth_count; i++) {
        char label[CELL];
        snprintf(label, sizeof label, "peak %" PRIu64, peaks[i].peak_depth);
        report_doc_bar(d, label, report_per_connection(&peaks[i], peaks[i].allocs));
    }
    free(peaks);
    const struct report_peak *one = report_peak_at(q, 1);
    if (one != NULL && one->connections > 0)
        report_doc_paragraph(
            d,
            "At depth one (%s connections whose queue never held more than one value): "
            "%.2f allocations and %.1f extra heap bytes per connection.",
            report_fmt_count((char[CELL]){0}, CELL, one->connections),
            report_per_connection(one, one->allocs), report_per_connection(one, one->bytes));
    else
        report_doc_paragraph(d, "No connection peaked at depth one.");
}

static void section_attribution(struct document *d, const struct report_queues *q)
{
    char a[CELL], b[CELL], c[CELL];
    if (q->pushes == 0 && q->opened == 0 && q->by_stack_patterns == 0)
        return;
    if (q->allocs_by_depth_count > 0) {
        report_doc_table(d, (const char *const[]){"depth left by the operation",
                                                  "allocations inside queue operations", NULL});
        for (size_t i = 0; i < q->allocs_by_depth_count; i++) {
            snprintf(a, sizeof a, "%" PRIu64, q->allocs_by_depth[i].key);
            report_doc_row(
                d, (const char *const[]){a, report_count_cell(b, q->allocs_by_depth[i].count)});
        }
    }
    report_doc_paragraph(
        d,
        "Attribution of queue allocations: %s by hooks, %s by stack patterns, %s by "
        "both.",
        report_count_cell(a, q->by_hooks), report_count_cell(b, q->by_stack_patterns),
        report_count_cell(c, q->by_both));
    if (q->events_without_connection || q->refused_events || q->records_dropped)
        report_doc_paragraph(
            d,
            "%s events for queues no connection announced, %s refused (another hook "
            "ABI), %s queues beyond what the interposer follows.",
            report_count_cell(a, q->events_without_connection),
            report_count_cell(b, q->refused_events), report_count_cell(c, q->records_dropped));
}

static void section_violations(struct document *d, const struct report *r)
{
    report_doc_heading(d, 2, "Depth-one violations");
    if (r->violation_count == 0) {
        report_doc_paragraph(
            d, "None: no allocation inside a queue operation left the queue at depth 0 "
               "or 1.");
        return;
    }
    report_doc_paragraph(d,
                         "The first allocations made inside a queue operation at depth <= 1 (%zu "
                         "kept):",
                         r->violation_count);
    report_doc_lines(d);
    for (size_t i = 0; i < r->violation_count; i++) {
        const struct report_event *v = &r->violations[i];
        report_doc_line(d, "pid %" PRIu64 ": %" PRIu64 " bytes at depth %" PRIu64, v->pid, v->size,
                        v->depth);
        report_stack_lines(d, r, &v->stack);
    }
}

static void class_range(enum allocator a, uint64_t from, uint64_t to, char *out, size_t size)
{
    struct size_class lo, hi;
    if (!probe_class_of(a, from ? from : 1, &lo) || !probe_class_of(a, to, &hi))
        snprintf(out, size, "-");
    else if (lo.reserved == hi.reserved)
        snprintf(out, size, "%" PRIu64, lo.reserved);
    else
        snprintf(out, size, "%" PRIu64 "-%" PRIu64, lo.reserved, hi.reserved);
}

static void section_sizes(struct document *d, const struct report *r)
{
    report_doc_heading(d, 2, "Requested sizes and allocator classes");
    if (r->requested_count == 0) {
        report_doc_paragraph(d, "No allocations.");
        return;
    }
    report_doc_paragraph(d,
                         "Each requested-size bucket with the classes (bytes reserved) the models "
                         "give its sizes:");
    const char *header[3 + ALLOC_COUNT] = {"requested bytes", "allocations"};
    for (int a = 0; a < ALLOC_COUNT; a++)
        header[2 + a] = probe_class_models[a].name;
    report_doc_table(d, header);
    for (size_t i = 0; i < r->requested_count; i++) {
        const struct report_bucket *b = &r->requested_sizes[i];
        char range[CELL], count[CELL], classes[ALLOC_COUNT][CELL];
        const char *row[2 + ALLOC_COUNT] = {range, report_count_cell(count, b->count)};
        snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, b->from, b->to);
        for (int a = 0; a < ALLOC_COUNT; a++) {
            class_range((enum allocator)a, b->from, b->to, classes[a], CELL);
            row[2 + a] = classes[a];
        }
        report_doc_row(d, row);
    }
    report_doc_chart(d, "Blocks by the running allocator's usable size (its size classes)",
                     "blocks", false);
    report_doc_chart_axis(d, "usable size (bytes)");
    for (size_t i = 0; i < r->usable_count; i++) {
        char label[CELL];
        snprintf(label, sizeof label, "%" PRIu64, r->usable_sizes[i].key);
        report_doc_bar(d, label, (double)r->usable_sizes[i].count);
    }
}

static void section_failures(struct document *d, const struct report *r)
{
    if (r->failure_candidates == 0 && r->failures_injected == 0)
        return;
    char a[CELL], b[CELL];
    report_doc_heading(d, 2, "Injected failures");
    report_doc_paragraph(d, "%s allocations matched the QAUDIT_FAIL filters; %s were made to fail.",
                         report_count_cell(a, r->failure_candidates),
                         report_count_cell(b, r->failures_injected));
    if (r->failure_count == 0)
        return;
    report_doc_lines(d);
    for (size_t i = 0; i < r->failure_count; i++) {
        const struct report_event *f = &r->failures[i];
        report_doc_line(d, "pid %" PRIu64 ": candidate %" PRIu64 ", %" PRIu64 " bytes", f->pid,
                        f->candidate, f->size);
        report_stack_lines(d, r, &f->stack);
    }
}

static void section_never_written(struct document *d, const struct report *r, unsigned top)
{
    const struct report_site **ranked = calloc(r->site_count + 1, sizeof *ranked);
    size_t n = ranked ? report_rank_sites(r, RANK_NEVER_WRITTEN, ranked) : 0;
    if (n > 0 || r->precision.never_written_unattributed > 0) {
        report_doc_heading(d, 2, "Bytes never written");
        report_doc_paragraph(
            d, "Bytes of freed blocks that still held the poison byte (QAUDIT_POISON), "
               "by site:");
        report_doc_table(
            d, (const char *const[]){"site", "never written", "allocated", "share", "where", NULL});
        for (size_t i = 0; i < n && i < top; i++) {
            char site[CELL], never[CELL], bytes[CELL], share[CELL], where[512];
            snprintf(site, sizeof site, "#%zu", (size_t)(ranked[i] - r->sites) + 1);
            snprintf(share, sizeof share, "%.1f %%",
                     ranked[i]->bytes
                         ? 100.0 * (double)ranked[i]->never_written_bytes / (double)ranked[i]->bytes
                         : 0.0);
            report_site_where(r, ranked[i], d->long_names, where, sizeof where);
            report_doc_row(
                d, (const char *const[]){
                       site, report_fmt_bytes(never, sizeof never, ranked[i]->never_written_bytes),
                       report_fmt_bytes(bytes, sizeof bytes, ranked[i]->bytes), share, where});
        }
        if (r->precision.never_written_unattributed > 0)
            report_doc_paragraph(
                d, "%s more in blocks without a site.",
                report_fmt_bytes((char[CELL]){0}, CELL, r->precision.never_written_unattributed));
    }
    free(ranked);
}

/* What qaudit layout --reorganize would suggest, when it is smaller: a struct with holes that
 * sorting its members by alignment closes, perhaps into a smaller class. */
static void reorganized_paragraph(struct document *d, const struct layout_type *t)
{
    struct layout_reorganized r;
    if (!layout_reorganize(t, &r))
        return;
    if (r.smaller) {
        char classes[256];
        layout_classes_text(r.type.size, classes, sizeof classes);
        report_doc_paragraph(
            d,
            "With its members sorted by alignment (qaudit layout --reorganize), it "
            "would take %" PRIu64 " bytes, %" PRIu64 " less; classes: %s.",
            r.type.size, t->size - r.type.size, classes);
    }
    layout_reorganized_free(&r);
}

static void section_layouts(struct document *d, const struct report_options *o)
{
    if (o->layout_count == 0 && o->layout_note == NULL)
        return;
    report_doc_heading(d, 2, "Struct layouts");
    if (o->layout_note != NULL)
        report_doc_paragraph(d, "%s", o->layout_note);
    if (o->layout_count == 0)
        return;
    report_doc_paragraph(d, "From %s.", o->layout_source ? o->layout_source : "DWARF");
    for (size_t i = 0; i < o->layout_count; i++) {
        const struct layout_type *t = o->layouts[i];
        char classes[256];
        layout_classes_text(t->size, classes, sizeof classes);
        report_doc_paragraph(d,
                             "%s %s: %" PRIu64 " bytes, %zu hole%s (%" PRIu64 " bytes), %" PRIu64
                             " bytes of tail padding; classes: %s.",
                             t->kind, t->name, t->size, t->hole_count,
                             t->hole_count == 1 ? "" : "s", t->hole_bytes, t->padding, classes);
        reorganized_paragraph(d, t);
        report_doc_layout(d, t);
    }
}

static void section_precision(struct document *d, const struct report *r)
{
    report_doc_heading(d, 2, "Precision");
    bool estimated = report_any_site_estimated(r);
    if (r->trust.partial)
        report_doc_paragraph(
            d, "Partial: some allocations or frees are missing from the figures above:");
    else if (estimated)
        report_doc_paragraph(d,
                             "Totals are exact; the sites' figures marked '~' are estimates from "
                             "sampled stacks, each with its 99 %% range.");
    else
        report_doc_paragraph(d, "Exact: every count above is exact%s.",
                             r->precision.peak_live_bytes_within ? "" : ", peak included");
    for (size_t i = 0; i < r->trust.note_count; i++)
        report_doc_paragraph(d, "%s", r->trust.notes[i]);
    struct debug_hint hints[16];
    size_t n = report_debug_hints(r, 0, hints, 16);
    for (size_t i = 0; i < n; i++) {
        char sentence[1024];
        report_debug_hint_sentence(r, &hints[i], sentence, sizeof sentence);
        report_doc_paragraph(d, "%s", sentence);
    }
    for (size_t i = 0; i < r->module_count; i++)
        if (r->modules[i].mismatched)
            report_doc_paragraph(d,
                                 "Frames in %s are marked '?': the file read has another build id "
                                 "than the dump's.",
                                 r->modules[i].path);
}

void report_build_document(struct document *d, const struct report *r,
                           const struct report_options *o)
{
    unsigned top = o->top ? o->top : 10;
    d->cacheline = o->cacheline ? o->cacheline : 64;
    d->report = r;
    d->top = top;
    report_check_tally(r, d->checks);
    d->queue_audit = report_queue_audit(r);
    d->long_names = o->long_names;
    bool *shown = calloc(r->site_count + 1, sizeof *shown);
    section_dumps(d, r);
    report_section_summary(d, r);
    report_section_coverage(d, r);
    if (d->queue_audit || d->checks[CHECK_FAIL] > 0) /* a failure is never left out */
        section_checks(d, r);
    section_totals(d, r);
    report_section_timeline(d, r);
    if (d->queue_audit) {
        section_queue_depths(d, &r->queues);
        section_per_connection(d, &r->queues);
        section_attribution(d, &r->queues);
        section_violations(d, r);
    }
    if (shown != NULL) {
        report_section_sites(d, r, top, shown);
        report_section_live(d, r, top, shown);
    }
    report_section_temporary(d, r, top);
    free(shown);
    section_sizes(d, r);
    section_failures(d, r);
    section_never_written(d, r, top);
    section_layouts(d, o);
    section_precision(d, r);
}
