/* What to look at first, on top of every report (the HTML page's banner): for a queue audit the
 * checks first; then for any program the largest leak, the most blocks left allocated (never
 * blocks held by design: said apart), live memory no site accounts for (and the command that
 * attributes it), the site with the most allocations and the one with the most temporary
 * allocations. */
#include <stdlib.h>
#include <string.h>

#include "reports_content.h"

void report_site_name(const struct report *r, const struct report_site *s, bool long_names,
                      char *out, size_t size)
{
    char where[1024];
    report_site_where(r, s, long_names, where, sizeof where);
    snprintf(out, size, "site #%zu, %s", (size_t)(s - r->sites) + 1, where);
}

/* The site of the leading program (programs.c) with the highest figure, or NULL when every such
 * site's is 0; blocks held by design are no leak. */
static const struct report_site *top_site(const struct report *r, enum site_rank key)
{
    const struct report_site *top = NULL;
    uint64_t lead = report_lead_program(r, NULL);
    for (size_t i = 0; i < r->site_count; i++)
        if (report_site_figure(&r->sites[i], key) > 0 && report_site_of_lead(&r->sites[i], lead) &&
            !(key == RANK_LIVE && r->sites[i].by_design != NULL) &&
            (top == NULL || report_site_figure(&r->sites[i], key) > report_site_figure(top, key)))
            top = &r->sites[i];
    return top;
}

static const struct report_site *most_live_blocks(const struct report *r)
{
    const struct report_site *top = NULL;
    uint64_t lead = report_lead_program(r, NULL);
    for (size_t i = 0; i < r->site_count; i++)
        if (r->sites[i].by_design == NULL &&
            r->sites[i].est.live_blocks > (top ? top->est.live_blocks : 0) &&
            report_site_of_lead(&r->sites[i], lead))
            top = &r->sites[i];
    return top;
}

static double percent(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

static void checks_item(struct document *d, const struct report *r)
{
    unsigned pass = d->checks[CHECK_PASS], fail = d->checks[CHECK_FAIL], na = d->checks[CHECK_NA];
    if (fail == 0) {
        if (na == 0)
            report_doc_item(d, "Checks: every check passed (%u).", pass);
        else
            report_doc_item(d, "Checks: %u passed, %u could not apply (n/a): see Checks.", pass,
                            na);
        return;
    }
    for (size_t i = 0; i < r->check_count; i++)
        if (report_check_status(&r->checks[i]) == CHECK_FAIL)
            report_doc_item(d, "Check %s failed: %s.", r->checks[i].name, r->checks[i].detail);
}

static void leak_items(struct document *d, const struct report *r)
{
    char name[1100], bytes[CELL], blocks[CELL];
    const struct report_site *top = top_site(r, RANK_LIVE);
    bool now = report_live_scope(r) == LIVE_NOW || report_live_scope(r) == LIVE_AT_DETACH;
    const char *when = report_held_when(r);
    const char *program; /* of several: the leading one's share (programs.c) */
    uint64_t lead = report_lead_program(r, &program);
    char whose[300] = "the";
    if (lead != 0)
        snprintf(whose, sizeof whose, "%s's", report_path_base_name(program));
    if (top != NULL) {
        report_site_name(r, top, d->long_names, name, sizeof name);
        report_doc_item(d,
                        "%s%s: %s: %s in %s block%s still allocated %s (%.1f %% of %s live bytes).",
                        now ? "Most memory held " : "Largest leak", now ? when : "", name,
                        report_fig_bytes(bytes, top->est.live_bytes, top->estimated),
                        report_fig_count(blocks, top->est.live_blocks, top->estimated),
                        top->est.live_blocks >= 1.5 ? "s" : "", when,
                        percent(top->est.live_bytes, lead ? report_lead_live_bytes(r, lead)
                                                          : report_live_share_whole(r)),
                        whose);
    }
    const struct report_site *many = most_live_blocks(r);
    if (many != NULL && many != top && many->est.live_blocks >= 99.5) {
        report_site_name(r, many, d->long_names, name, sizeof name);
        report_doc_item(d, "Most blocks still allocated: %s: %s blocks, %s.", name,
                        report_fig_count(blocks, many->est.live_blocks, many->estimated),
                        report_fig_bytes(bytes, many->est.live_bytes, many->estimated));
    }
    char sentence[5000];
    if (report_by_design_sentence(r, false, sentence, sizeof sentence))
        report_doc_item(d, "%s", sentence);
    if (report_unsited_sentence(r, sentence, sizeof sentence))
        report_doc_item(d, "%s", sentence);
}

static void cost_items(struct document *d, const struct report *r)
{
    char name[1100], a[CELL], b[CELL], c[CELL];
    const struct report_site *top = top_site(r, RANK_ALLOCS);
    uint64_t calls = r->totals.allocs + r->totals.reallocs;
    /* of several programs, the share of the leading one's calls, as the site is one of its */
    struct report_program lead;
    char whose[300] = "the";
    if (report_programs(r, &lead, 1) > 1) {
        calls = lead.alloc_calls;
        snprintf(whose, sizeof whose, "%s's", report_path_base_name(lead.exe));
    }
    if (top != NULL) {
        report_site_name(r, top, d->long_names, name, sizeof name);
        report_doc_item(d, "Most allocations: %s: %s of %s %s allocation calls (%.1f %%), %s.",
                        name, report_fig_count(a, top->est.allocs, top->estimated), whose,
                        report_count_cell(b, calls), percent(top->est.allocs, (double)calls),
                        report_fig_bytes(c, top->est.bytes, top->estimated));
    }
    const struct report_site *temporary = r->temporary_missing ? NULL : top_site(r, RANK_TEMPORARY);
    /* worth fixing first only where there are many: 100, or 1 % of all calls */
    if (temporary != NULL && temporary->est.temporary < 100 &&
        temporary->est.temporary < 0.01 * (double)calls)
        temporary = NULL;
    if (temporary != NULL) {
        report_site_name(r, temporary, d->long_names, name, sizeof name);
        report_doc_item(d,
                        "Most temporary allocations (freed before the thread's next allocation or "
                        "free): %s: "
                        "%s, %.1f %% of its allocations.",
                        name, report_fig_count(a, temporary->est.temporary, temporary->estimated),
                        percent(temporary->est.temporary, temporary->est.allocs));
    }
}

/* A Python whose objects pymalloc kept from malloc, a runtime whose objects never reach it, and
 * the module with the most frames without symbols with the package that names them. */
static void interpreter_items(struct document *d, const struct report *r)
{
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        if (p->runtime != 0)
            report_doc_item(d,
                            "pid %llu runs %s: its %s are not in these figures (they live in the "
                            "runtime's own heap), only its native allocations.",
                            (unsigned long long)p->pid, report_runtime_name(p->runtime),
                            report_runtime_objects(p->runtime));
        if (!report_process_is_python(p))
            continue;
        if (report_python_objects_counted(p))
            report_doc_item(d, "pid %llu is Python: its objects are counted (PYTHONMALLOC=malloc).",
                            (unsigned long long)p->pid);
        else if (p->pythonmalloc != NULL)
            report_doc_item(d,
                            "pid %llu is Python and its small objects are not counted (it ran with "
                            "PYTHONMALLOC=%s: pymalloc): run it with PYTHONMALLOC=malloc.",
                            (unsigned long long)p->pid, p->pythonmalloc);
        else
            report_doc_item(d,
                            "pid %llu is Python and its small objects are likely not counted "
                            "(pymalloc): run it with PYTHONMALLOC=malloc (qaudit run sets it where "
                            "PYTHONMALLOC is not set).",
                            (unsigned long long)p->pid);
    }
    struct debug_hint hints[16];
    size_t n = report_debug_hints(r, report_lead_program(r, NULL), hints, 16), most = 0;
    for (size_t i = 1; i < n; i++)
        most = hints[i].frames > hints[most].frames ? i : most;
    if (n > 0) {
        char sentence[1024];
        report_debug_hint_sentence(r, &hints[most], sentence, sizeof sentence);
        report_doc_item(d, "%s", sentence);
    }
}

/* Dumps of several programs (a shim's helpers, a launcher): whose items follow, and the others. */
static void programs_item(struct document *d, const struct report *r)
{
    struct report_program programs[6];
    size_t count = report_programs(r, programs, 6);
    if (count < 2)
        return;
    double calls = (double)(r->totals.allocs + r->totals.reallocs);
    char others[1024] = "", processes[CELL];
    size_t used = 0;
    for (size_t i = 1; i < count && i < 6 && used < sizeof others; i++)
        used += (size_t)snprintf(others + used, sizeof others - used, "%s%s (%s, %.1f %%)",
                                 i > 1 ? ", " : "", report_path_base_name(programs[i].exe),
                                 report_count_cell(processes, programs[i].processes),
                                 percent((double)programs[i].alloc_calls, calls));
    report_doc_item(
        d,
        "These dumps are of %zu programs; the items below are %s's, which made %.1f %% of "
        "the allocation calls (%s process%s). The others (processes, calls): %s%s; "
        "qaudit report --program NAME reports one alone.",
        count, report_path_base_name(programs[0].exe),
        percent((double)programs[0].alloc_calls, calls),
        report_count_cell(processes, programs[0].processes), programs[0].processes == 1 ? "" : "es",
        others, count > 6 ? ", ..." : "");
}

void report_section_summary(struct document *d, const struct report *r)
{
    /* Green only when every check of a queue audit passed; n/a is never called passed. */
    const unsigned *tally = d->checks;
    enum tone tone = tally[CHECK_FAIL] > 0                                             ? TONE_FAIL
                     : d->queue_audit && tally[CHECK_NA] == 0 && tally[CHECK_PASS] > 0 ? TONE_PASS
                                                                                       : TONE_INFO;
    report_doc_list(d, tone, "What to look at first");
    if (d->queue_audit || d->checks[CHECK_FAIL] > 0)
        checks_item(d, r);
    /* Before the leaks and costs it qualifies: a reader stops at the first item. */
    if (r->trust.partial)
        report_doc_item(d,
                        "Some allocations or frees are missing from these figures: see Precision.");
    if (r->totals.allocs + r->totals.reallocs == 0) {
        report_doc_item(d, "No allocation was counted.");
    } else {
        programs_item(d, r);
        leak_items(d, r);
        cost_items(d, r);
        interpreter_items(d, r);
    }
}
