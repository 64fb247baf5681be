/* Unit tests of a report that says how far it can be trusted (issue 13): checks that could not
 * apply read n/a, sampled sites are scaled with a range, precision says exact or partial and why,
 * the live bytes are ranked, wrappers fold away, a dump given twice counts once. Each dump is a
 * variant of the committed example written with jansson. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_fixture.h"

static void load_paths(const char **paths, size_t n, struct report *r)
{
    char error[512] = "";
    memset(r, 0, sizeof *r);
    if (report_load(paths, n, r, error, sizeof error) != REPORT_OK)
        fail_msg("load: %s", error);
}

static void load_doc(json_t *doc, const char *name, struct report *r)
{
    const char *path = write_doc(doc, name);
    load_paths(&path, 1, r);
}

static json_t *render_json(const struct report *r)
{
    char *text = render(r, REPORT_JSON);
    json_error_t e;
    json_t *doc = json_loads(text, 0, &e);
    free(text);
    assert_non_null(doc);
    return doc;
}

static json_t *path_get(json_t *doc, const char *a, const char *b)
{
    json_t *v = json_object_get(doc, a);
    return b ? json_object_get(v, b) : v;
}

/* The example as a program without queue hooks writes it: no queue events, every check passed,
 * and no status (a dump from before checks[].status). */
static json_t *without_hooks(void)
{
    json_t *doc = example();
    json_t *q = json_object_get(doc, "queues");
    const char *zero[] = {"pushes",     "pops",  "discarded", "moved",
                          "queued_now", "grows", "shrinks",   "returns_to_inline"};
    for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
        json_object_set_new(q, zero[i], json_integer(0));
    json_object_set_new(q, "depth_histogram", json_array());
    json_object_set_new(q, "allocs_by_depth", json_array());
    json_object_set_new(q, "by_peak_depth", json_array());
    json_object_set_new(json_object_get(q, "connections"), "opened", json_integer(0));
    json_object_set_new(json_object_get(q, "connections"), "closed", json_integer(0));
    json_object_set_new(json_object_get(q, "attribution"), "by_hooks", json_integer(0));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "checks"), i, c)
        json_object_set_new(c, "passed", json_true());
    json_object_set_new(doc, "depth_one_violations", json_array());
    return doc;
}

static void checks_without_hooks_are_not_applicable(void **state)
{
    (void)state;
    json_t *doc = without_hooks();
    struct report r;
    load_doc(doc, "nohooks.json", &r);
    assert_int_equal(r.check_count, 3);
    for (size_t i = 0; i < r.check_count; i++) {
        assert_int_equal(report_check_status(&r.checks[i]), CHECK_NA);
        assert_false(report_check_passed(&r.checks[i]));
    }
    assert_true(report_passed(&r)); /* n/a fails nothing: exit status 0 */
    /* A program without queue hooks is not told about checks that cannot apply to it. */
    assert_false(report_queue_audit(&r));
    char *text = render(&r, REPORT_TEXT);
    assert_null(strstr(text, "== Checks"));
    assert_null(strstr(text, "PASS"));
    assert_null(strstr(text, "N/A"));
    assert_null(strstr(text, "== Queue"));
    assert_null(strstr(text, "queue allocs"));
    assert_null(strstr(text, "inside queue operations"));
    assert_null(strstr(text, "Depth-one"));
    free(text);
    char *html = render(&r, REPORT_HTML);
    assert_null(strstr(html, "Every check passed"));
    assert_null(strstr(html, "verdict pass"));
    assert_non_null(strstr(html, "<div class=\"verdict info\" id=\"summary\">"));
    free(html);
    json_t *out = render_json(&r);
    json_t *check = json_array_get(json_object_get(out, "checks"), 0);
    assert_string_equal(json_string_value(json_object_get(check, "status")), "n/a");
    assert_false(json_is_true(json_object_get(check, "passed")));
    assert_non_null(strstr(json_string_value(json_object_get(check, "detail")), "qaudit_hook"));
    assert_int_equal(json_integer_value(path_get(out, "checks_summary", "n/a")), 3);
    json_decref(out);
    report_free(&r);
    json_decref(doc);
}

/* A dump that states checks[].status is read as it says; one that contradicts passed is refused. */
static void a_status_in_the_dump_is_read(void **state)
{
    (void)state;
    json_t *doc = example();
    json_t *checks = json_object_get(doc, "checks");
    json_object_set_new(json_array_get(checks, 1), "status", json_string("n/a"));
    json_object_set_new(json_array_get(checks, 1), "passed", json_false());
    json_object_set_new(json_array_get(checks, 0), "status", json_string("fail"));
    json_object_set_new(json_array_get(checks, 2), "status", json_string("pass"));
    struct report r;
    load_doc(doc, "status.json", &r);
    assert_int_equal(report_check_status(&r.checks[0]), CHECK_FAIL);
    assert_int_equal(report_check_status(&r.checks[1]), CHECK_NA);
    assert_int_equal(report_check_status(&r.checks[2]), CHECK_PASS);
    assert_false(report_passed(&r));
    unsigned tally[3];
    report_check_tally(&r, tally);
    assert_int_equal(tally[CHECK_PASS], 1);
    assert_int_equal(tally[CHECK_FAIL], 1);
    assert_int_equal(tally[CHECK_NA], 1);
    report_free(&r);
    json_object_set_new(json_array_get(checks, 2), "passed", json_false());
    const char *path = write_doc(doc, "contradiction.json");
    char error[512] = "";
    memset(&r, 0, sizeof r);
    assert_int_equal(report_load(&path, 1, &r, error, sizeof error), REPORT_INPUT_ERROR);
    assert_non_null(strstr(error, "contradicts passed"));
    report_free(&r);
    json_decref(doc);
}

/* The example dump, as a run sampled one stack in every allocations (or bytes, by_bytes). */
static json_t *sampled_example(json_int_t every, bool by_bytes)
{
    json_t *doc = example();
    json_t *config = json_object_get(doc, "config");
    json_object_set_new(config, "stacks", json_string("sampled"));
    json_object_set_new(config, "sample_every", json_integer(every));
    json_object_set_new(config, "sample_by_bytes", json_boolean(by_bytes));
    return doc;
}

/* Sampled by count, one stack in 64: the site's 2 samples stand for 128 allocations; the range is
 * a 99 % Poisson interval on 2 samples (Garwood: 0.103 to 9.27) times 64. */
static void sampled_by_count_is_scaled_with_a_range(void **state)
{
    (void)state;
    json_t *doc = sampled_example(64, false);
    struct report r;
    load_doc(doc, "count.json", &r);
    const struct report_site *s = &r.sites[0];
    assert_true(s->estimated);
    assert_int_equal(s->allocs, 2); /* the samples stay as read */
    assert_true(fabs(s->est.allocs - 128) < 1e-9);
    assert_true(fabs(s->est.bytes - 288 * 64) < 1e-9);
    assert_true(s->est.allocs_low > 0.09 * 64 && s->est.allocs_low < 0.12 * 64);
    assert_true(s->est.allocs_high > 9.0 * 64 && s->est.allocs_high < 9.5 * 64);
    char *text = render(&r, REPORT_TEXT);
    assert_non_null(strstr(text, "~128"));
    assert_non_null(strstr(text, "sampled:64"));
    /* "exact" only for what is: the totals */
    assert_null(strstr(text, "Exact"));
    const char *exact = strstr(text, "exact");
    assert_non_null(exact);
    assert_non_null(strstr(text, "Totals are exact;"));
    assert_true(exact == strstr(text, "Totals are exact;") + strlen("Totals are "));
    assert_null(strstr(exact + 1, "exact"));
    free(text);
    json_t *out = render_json(&r);
    json_t *site = json_array_get(json_object_get(out, "sites"), 0);
    assert_string_equal(json_string_value(json_object_get(site, "precision")), "estimated");
    assert_int_equal(json_integer_value(json_object_get(site, "allocs")), 128);
    assert_int_equal(json_integer_value(path_get(site, "sampled", "allocs")), 2);
    assert_int_equal(json_array_size(path_get(site, "range", "allocs")), 2);
    assert_string_equal(json_string_value(path_get(out, "precision", "counts")), "exact");
    json_decref(out);
    report_free(&r);
    /* An older dump that does not say count or bytes: inferred from the number of samples (2
     * samples of 128 allocations by count, against 15,625 expected by bytes). */
    json_object_del(json_object_get(doc, "config"), "sample_by_bytes");
    json_object_set_new(json_object_get(doc, "totals"), "allocs", json_integer(128));
    json_object_set_new(json_object_get(doc, "totals"), "bytes_requested", json_integer(1000000));
    load_doc(doc, "inferred.json", &r);
    assert_true(r.processes[0].sampling_inferred);
    assert_int_equal(r.processes[0].sampling, SAMPLING_COUNT);
    assert_true(fabs(r.sites[0].est.allocs - 128) < 1e-9);
    report_free(&r);
    json_decref(doc);
}

/* Sampled by bytes, one per 4096: samples of 144 bytes on average; with a fixed countdown each
 * stands for 4096 / 144 allocations, with exponential intervals (tcmalloc's) 1 / (1 - e^-144/4096).
 */
static void sampled_by_bytes_is_unbiased_as_the_sampler_was(void **state)
{
    (void)state;
    json_t *doc = sampled_example(4096, true);
    struct report r;
    load_doc(doc, "bytes.json", &r);
    assert_true(fabs(r.sites[0].est.allocs - 2 * 4096.0 / 144) < 1e-6);
    assert_true(fabs(r.sites[0].est.bytes - 2 * 4096.0) < 1e-6);
    report_free(&r);
    json_object_set_new(json_object_get(doc, "config"), "sample_intervals",
                        json_string("exponential"));
    load_doc(doc, "bytes-exp.json", &r);
    double w = 1 / (1 - exp(-144.0 / 4096));
    assert_true(fabs(r.sites[0].est.allocs - 2 * w) < 1e-6);
    assert_true(fabs(r.sites[0].est.bytes - 288 * w) < 1e-6);
    report_free(&r);
    /* A dump that gives each sample's weight: used instead of the mean size's. */
    json_object_set_new(json_array_get(json_object_get(doc, "sites"), 0), "allocs_estimate",
                        json_integer(80));
    load_doc(doc, "bytes-weights.json", &r);
    assert_true(fabs(r.sites[0].est.allocs - 80) < 1e-6);
    report_free(&r);
    json_decref(doc);
}

/* A dump that lost allocations (an allocator the preload could not see), or a process known
 * only by a snapshot: counts are partial, and a note says why. */
static void precision_is_partial_with_a_note(void **state)
{
    (void)state;
    struct report r;
    json_t *doc = example();
    load_doc(doc, "exact.json", &r);
    assert_false(r.trust.partial);
    report_free(&r);
    json_t *p = json_object_get(doc, "precision");
    json_object_set_new(p, "exact", json_false());
    json_object_set_new(p, "uninterposed_allocators", json_pack("[s]", "jemalloc"));
    load_doc(doc, "unseen.json", &r);
    assert_true(r.trust.partial);
    json_t *out = render_json(&r);
    assert_string_equal(json_string_value(path_get(out, "precision", "counts")), "partial");
    json_t *notes = path_get(out, "precision", "notes");
    assert_true(json_array_size(notes) >= 1);
    assert_non_null(strstr(json_string_value(json_array_get(notes, 0)), "jemalloc"));
    json_decref(out);
    char *text = render(&r, REPORT_TEXT);
    assert_non_null(strstr(text, "Partial: "));
    assert_null(strstr(text, "Exact"));
    free(text);
    report_free(&r);
    json_decref(doc);

    /* An allocator no preload reaches: named with its object, in the notes and the JSON. */
    doc = example();
    p = json_object_get(doc, "precision");
    json_object_set_new(p, "exact", json_false());
    json_object_set_new(p, "unreachable_allocators",
                        json_pack("[{s:s,s:s}]", "allocator", "jemalloc built with the je_ prefix",
                                  "library", "/opt/redis/redis-server"));
    load_doc(doc, "unreachable.json", &r);
    assert_true(r.trust.partial);
    out = render_json(&r);
    assert_string_equal(
        json_string_value(json_array_get(path_get(out, "precision", "unreachable_allocators"), 0)),
        "/opt/redis/redis-server has jemalloc built with the je_ prefix");
    json_decref(out);
    assert_int_equal(r.trust.note_count, 1);
    assert_non_null(strstr(r.trust.notes[0], "/opt/redis/redis-server has jemalloc built with the "
                                             "je_ prefix: calls to it were not counted"));
    report_free(&r);
    json_decref(doc);

    /* Anonymous memory no counted peak explains (a runtime's own heap, a private arena): how
     * much more it grew than the peak, in how many dumps. */
    doc = example();
    p = json_object_get(doc, "precision");
    json_object_set_new(p, "exact", json_false());
    json_object_set_new(p, "unexplained_anonymous", json_true());
    json_object_set_new(p, "anonymous_bytes_at_start", json_integer(1 << 20));
    json_object_set_new(p, "anonymous_bytes", json_integer(9 << 20));
    json_object_set_new(p, "counted_peak_live_bytes", json_integer(2 << 20));
    load_doc(doc, "unexplained.json", &r);
    assert_true(r.trust.partial);
    assert_int_equal(r.trust.note_count, 1);
    assert_non_null(strstr(r.trust.notes[0], "Anonymous memory grew by 6.00 MiB more than the "
                                             "counted peak in 1 dump: an allocator"));
    report_free(&r);
    json_decref(doc);

    doc = example();
    json_object_set_new(doc, "reason", json_string("signal"));
    load_doc(doc, "snapshot.json", &r);
    assert_true(r.trust.partial);
    assert_non_null(strstr(r.trust.notes[0], "only a snapshot"));
    char *md = render(&r, REPORT_MARKDOWN);
    assert_non_null(strstr(md, "## Live now"));
    free(md);
    report_free(&r);
    json_decref(doc);
}

/* qaudit attach (issue 39): the detach dump is the last of the attach, not "only a snapshot",
 * and its live figures are at the detach; the program is named by its title (redis writes one
 * over argv, padded with empty arguments), not by its exe (the symlink's target). */
static void a_detach_dump_is_named_as_such(void **state)
{
    (void)state;
    json_t *doc = example();
    json_object_set_new(doc, "reason", json_string("detach"));
    json_t *p = json_object_get(doc, "process");
    uint64_t start = (uint64_t)json_integer_value(json_object_get(p, "start_time_ns"));
    json_object_set_new(p, "attached_at", json_integer((json_int_t)start));
    json_object_set_new(p, "dump_time_ns", json_integer((json_int_t)(start + 2500000000u)));
    json_object_set_new(p, "exe", json_string("/usr/bin/redis-check-rdb"));
    json_t *argv = json_array();
    json_array_append_new(argv, json_string("redis-server 127.0.0.1:6379   "));
    for (int i = 0; i < 40; i++)
        json_array_append_new(argv, json_string(""));
    json_object_set_new(p, "argv", argv);
    struct report r;
    load_doc(doc, "detach.json", &r);
    assert_string_equal(r.processes[0].argv, "redis-server 127.0.0.1:6379");
    assert_string_equal(r.processes[0].command, "'redis-server 127.0.0.1:6379   '");
    assert_false(r.trust.partial);
    assert_int_equal(r.trust.note_count, 1);
    assert_non_null(strstr(r.trust.notes[0], "redis-server (pid 27928) was counted from its "
                                             "qaudit attach to its detach (2.5 s;"));
    char *md = render(&r, REPORT_MARKDOWN);
    assert_null(strstr(md, "only a snapshot"));
    assert_null(strstr(md, "redis-check-rdb"));
    assert_non_null(strstr(md, "## Live at the detach"));
    free(md);
    report_free(&r);
    json_decref(doc);
}

/* The command that gives every live block its site, for a process counted from an attach: an
 * attach to its pid, not a run of its command line (the server is already running). */
static void an_attached_process_is_told_to_attach_again(void **state)
{
    (void)state;
    json_t *doc = sampled_example(64, false);
    struct report r;
    load_doc(doc, "run.json", &r);
    json_t *out = render_json(&r);
    const char *command =
        json_string_value(path_get(path_get(out, "live", "without_site"), "command", NULL));
    assert_non_null(command);
    assert_non_null(strstr(command, "qaudit run --stacks always -- "));
    json_decref(out);
    report_free(&r);
    json_t *p = json_object_get(doc, "process");
    json_object_set(p, "attached_at", json_object_get(p, "start_time_ns"));
    load_doc(doc, "attached.json", &r);
    out = render_json(&r);
    command = json_string_value(path_get(path_get(out, "live", "without_site"), "command", NULL));
    char expected[64];
    snprintf(expected, sizeof expected, "qaudit attach %llu --stacks always",
             (unsigned long long)r.processes[0].pid);
    assert_non_null(command);
    assert_string_equal(command, expected);
    char *text = render(&r, REPORT_TEXT);
    assert_null(strstr(text, "qaudit run --stacks always"));
    free(text);
    json_decref(out);
    report_free(&r);
    json_decref(doc);
}

/* A program's name as the user ran it, at the edges: a title, a path, no command line. */
static void programs_are_named_as_run(void **state)
{
    (void)state;
    char name[64];
    program_name("nginx: worker process", "/usr/sbin/nginx", name, sizeof name);
    assert_string_equal(name, "nginx");
    program_name("/work/build/bin/ringkv --port 0", "/work/build/bin/ringkv", name, sizeof name);
    assert_string_equal(name, "ringkv");
    program_name("", "/usr/bin/redis-check-rdb", name, sizeof name);
    assert_string_equal(name, "redis-check-rdb");
    program_name("  ", NULL, name, sizeof name);
    assert_string_equal(name, "");
    program_name(":", "/bin/x", name, sizeof name); /* a lone colon stays: it is the word */
    assert_string_equal(name, ":");
}

/* Two sites, one leaking, every live block sited: 288 + 16 requested bytes of 320 usable. */
static json_t *leaking(void)
{
    json_t *doc = example();
    json_t *sites = json_object_get(doc, "sites");
    json_t *leak = json_deep_copy(json_array_get(sites, 0));
    json_array_set_new(json_object_get(leak, "frames"), 0, json_string("0x55b72f669100"));
    json_object_set_new(leak, "frees", json_integer(0));
    json_object_set_new(leak, "live_bytes", json_integer(288));
    json_array_append_new(sites, leak);
    json_object_set_new(json_array_get(sites, 0), "live_bytes", json_integer(16));
    json_object_set_new(json_array_get(sites, 0), "frees", json_integer(1));
    json_object_set_new(json_object_get(doc, "totals"), "live_bytes", json_integer(320));
    json_object_set_new(json_object_get(doc, "totals"), "live_blocks", json_integer(3));
    return doc;
}

static double live_share(json_t *live, size_t i)
{
    return json_real_value(
        json_object_get(json_array_get(json_object_get(live, "sites"), i), "share"));
}

/* The leak comes first in "Live at exit". The sites count requested bytes, the totals usable
 * ones: with every live block sited, the shares are of the sites' own sum (they add up to 100 %)
 * and the difference is told as the allocator's rounding. */
static void the_leak_ranks_first_in_live_at_exit(void **state)
{
    (void)state;
    json_t *doc = leaking();
    struct report r;
    load_doc(doc, "leak.json", &r);
    json_t *out = render_json(&r);
    json_t *live = json_object_get(out, "live");
    assert_string_equal(json_string_value(json_object_get(live, "at")), "exit");
    json_t *first = json_array_get(json_object_get(live, "sites"), 0);
    assert_int_equal(json_integer_value(json_object_get(first, "id")), 2);
    assert_int_equal(json_integer_value(json_object_get(first, "live_blocks")), 2);
    assert_int_equal(json_integer_value(json_object_get(live, "share_of")), 304);
    assert_int_equal(json_integer_value(json_object_get(live, "rounding_bytes")), 16);
    assert_true(fabs(live_share(live, 0) - 288.0 / 304) < 1e-9);
    assert_true(fabs(live_share(live, 0) + live_share(live, 1) - 1) < 1e-9);
    json_decref(out);
    char *text = render(&r, REPORT_TEXT);
    const char *section = strstr(text, "== Live at exit");
    assert_non_null(section);
    /* The text wraps at "16 B": two pieces. */
    assert_non_null(strstr(section, "what each call asked for: 304 B in all; the other 16 B"));
    assert_non_null(strstr(section, "(5.0 %) is the allocator's rounding of those blocks"));
    assert_non_null(strstr(section, "94.7 %"));
    const char *row = strstr(section, "\n  #");
    assert_non_null(row);
    assert_int_equal(strncmp(row, "\n  #2 ", 6), 0);
    free(text);
    report_free(&r);
    json_decref(doc);
}

/* Two live blocks no site accounts for: known in usable bytes only, so the shares are of the
 * usable total and the rounding cannot be told. */
static void live_shares_without_a_site_for_every_block_are_of_the_total(void **state)
{
    (void)state;
    json_t *doc = leaking();
    json_object_set_new(json_object_get(doc, "totals"), "live_bytes", json_integer(400));
    json_object_set_new(json_object_get(doc, "totals"), "live_blocks", json_integer(5));
    struct report r;
    load_doc(doc, "unsited.json", &r);
    json_t *out = render_json(&r);
    json_t *live = json_object_get(out, "live");
    assert_int_equal(json_integer_value(json_object_get(live, "share_of")), 400);
    assert_true(json_is_null(json_object_get(live, "rounding_bytes")));
    assert_true(fabs(live_share(live, 0) - 288.0 / 400) < 1e-9);
    json_decref(out);
    char *text = render(&r, REPORT_TEXT);
    assert_non_null(
        strstr(text, "The sites below count requested bytes, what each call asked for."));
    assert_null(strstr(text, "allocator's rounding"));
    free(text);
    report_free(&r);
    json_decref(doc);
}

/* Figures with calls missing say so before the leak they qualify: a reader stops at the first
 * item of "What to look at first". */
static void partial_figures_are_said_before_the_largest_leak(void **state)
{
    (void)state;
    json_t *doc = leaking();
    json_t *p = json_object_get(doc, "precision");
    json_object_set_new(p, "exact", json_false());
    json_object_set_new(p, "uninterposed_allocators", json_pack("[s]", "jemalloc"));
    struct report r;
    load_doc(doc, "partial-leak.json", &r);
    char *text = render(&r, REPORT_TEXT);
    const char *missing = strstr(text, "Some allocations or frees are missing from these figures");
    const char *leak = strstr(text, "Largest leak: site #2");
    assert_non_null(missing);
    assert_non_null(leak);
    assert_true(missing < leak);
    free(text);
    report_free(&r);
    json_decref(doc);
}

/* A process that loaded libjvm.so keeps its Java objects in the JVM's own heap: the report says
 * its figures are its native allocations, in the summary, Precision and JSON; a process without
 * such a runtime is told nothing of it. */
static void a_runtime_heap_is_said_to_be_unseen(void **state)
{
    (void)state;
    json_t *doc = example();
    json_array_append_new(json_object_get(doc, "modules"),
                          json_pack("{s:s, s:s, s:s, s:s, s:s}", "path",
                                    "/usr/lib/jvm/java-17/lib/server/libjvm.so", "base",
                                    "0x7f0000000000", "start", "0x7f0000000000", "end",
                                    "0x7f0001000000", "build_id", ""));
    struct report r;
    load_doc(doc, "jvm.json", &r);
    char *text = render(&r, REPORT_TEXT);
    const char *item = "runs the JVM: its Java objects are not in these figures";
    assert_non_null(strstr(text, item));
    assert_true(strstr(text, item) < strstr(text, "== Totals"));
    assert_non_null(strstr(strstr(text, "== Precision"), "runs the JVM: its Java objects live in a "
                                                         "heap it maps and collects itself"));
    free(text);
    json_t *out = render_json(&r);
    json_t *runtime = json_object_get(json_array_get(json_object_get(out, "dumps"), 0), "runtime");
    assert_string_equal(json_string_value(json_object_get(runtime, "name")), "the JVM");
    assert_string_equal(json_string_value(json_object_get(runtime, "objects")), "Java objects");
    json_decref(out);
    report_free(&r);
    json_decref(doc);
    doc = example();
    load_doc(doc, "native.json", &r);
    text = render(&r, REPORT_TEXT);
    assert_null(strstr(text, " runs "));
    free(text);
    out = render_json(&r);
    assert_true(
        json_is_null(json_object_get(json_array_get(json_object_get(out, "dumps"), 0), "runtime")));
    json_decref(out);
    report_free(&r);
    json_decref(doc);
}

/* The same dump twice, and a copy of it under another name: one process, counted once. Of one
 * image's snapshots and final dump, the latest sequence is counted. */
static void a_dump_given_twice_counts_once(void **state)
{
    (void)state;
    json_t *doc = example();
    json_object_set_new(json_object_get(doc, "process"), "sequence", json_integer(0));
    const char *one = write_doc(doc, "one.json");
    const char *copy = write_doc(doc, "copy.json");
    const char *paths[] = {one, one, copy};
    struct report r;
    load_paths(paths, 3, &r);
    assert_int_equal(r.process_count, 1);
    assert_int_equal(r.duplicates, 2);
    assert_int_equal(r.totals.allocs, 3);
    assert_int_equal(r.input_note_count, 2);
    assert_non_null(strstr(r.input_notes[1], "copy.json is the same dump as"));
    report_free(&r);
    /* sequence 2 is the latest, though written with an earlier clock */
    json_t *later = json_deep_copy(doc);
    json_object_set_new(json_object_get(later, "process"), "sequence", json_integer(2));
    json_object_set_new(json_object_get(later, "totals"), "allocs", json_integer(7));
    const char *last = write_doc(later, "last.json");
    const char *order[] = {last, one};
    load_paths(order, 2, &r);
    assert_int_equal(r.process_count, 1);
    assert_int_equal(r.superseded, 1);
    assert_int_equal(r.totals.allocs, 7);
    report_free(&r);
    json_decref(later);
    json_decref(doc);
}

/* The sites' share of the totals: the example's one site holds 2 of the 3 allocations. */
static void coverage_says_what_the_sites_hold(void **state)
{
    (void)state;
    const char *path = EXAMPLE_DUMP;
    struct report r;
    load_paths(&path, 1, &r);
    char *text = render(&r, REPORT_MARKDOWN);
    assert_non_null(strstr(text, "Coverage: the sites account for 66.7 % of the 3 allocation "
                                 "calls and 90.0 % of the "));
    free(text);
    report_free(&r);
}

/* Temporary allocations rendered when the dump counts them, and said missing when not. */
static void temporary_allocations_when_counted(void **state)
{
    (void)state;
    json_t *doc = example();
    struct report r;
    load_doc(doc, "notemp.json", &r);
    char *text = render(&r, REPORT_TEXT);
    assert_non_null(strstr(text, "== Temporary allocations\nNot counted"));
    free(text);
    report_free(&r);
    json_object_set_new(json_object_get(doc, "totals"), "temporary", json_integer(1));
    json_object_set_new(json_array_get(json_object_get(doc, "sites"), 0), "temporary",
                        json_integer(1));
    load_doc(doc, "temp.json", &r);
    text = render(&r, REPORT_TEXT);
    assert_non_null(strstr(text, "1 of the 3 allocation calls (33.3 %) were temporary"));
    free(text);
    json_t *out = render_json(&r);
    assert_int_equal(json_integer_value(path_get(out, "temporary", "total")), 1);
    json_decref(out);
    report_free(&r);
    json_decref(doc);
}

/* A site as symbolization leaves it: each frame one function. */
static void add_site(struct report *r, const char *const *functions, size_t n, uint64_t allocs)
{
    struct report_site *s = &r->sites[r->site_count++];
    memset(s, 0, sizeof *s);
    s->stack.frames = calloc(n, sizeof *s->stack.frames);
    s->stack.frame_count = n;
    for (size_t i = 0; i < n; i++) {
        struct report_frame *f = &s->stack.frames[i];
        f->module = REPORT_NO_MODULE;
        uint64_t pc = 5381; /* the same function at the same address in every site */
        for (const char *c = functions[i]; *c; c++)
            pc = pc * 33 + (unsigned char)*c;
        f->offset = pc;
        f->locations = calloc(1, sizeof *f->locations);
        f->locations[0].function = strdup(functions[i]);
        f->location_count = 1;
    }
    s->allocs = allocs;
    s->est.allocs = (double)allocs;
}

/* zmalloc and ztrymalloc_usable fold into their caller; two sites that differ only in the
 * wrapper become one; --skip none would keep them. */
static void wrappers_fold_into_their_callers(void **state)
{
    (void)state;
    struct report r = {0};
    r.sites = calloc(4, sizeof *r.sites);
    r.symbolized = true;
    add_site(&r, (const char *[]){"ztrymalloc_usable", "zmalloc", "createObject", "main"}, 4, 3);
    add_site(&r, (const char *[]){"zmalloc", "createObject", "main"}, 3, 5);
    add_site(&r, (const char *[]){"zmalloc"}, 1, 7); /* a shallow stack keeps its only frame */
    size_t n = 0;
    while (report_default_skip[n] != NULL)
        n++;
    report_fold(&r, &(struct report_fold_settings){report_default_skip, n, n, false});
    assert_int_equal(r.site_count, 2);
    assert_int_equal(r.folded_sites, 1);
    assert_int_equal(r.sites[0].allocs, 8);
    assert_string_equal(r.sites[0].stack.frames[0].locations[0].function, "createObject");
    assert_string_equal(r.sites[0].wrapper, "zmalloc");
    assert_string_equal(r.sites[1].stack.frames[0].locations[0].function, "zmalloc");
    assert_int_equal(r.skip_count, n);
    report_free(&r);
}

/* The runtimes' own wrappers fold by default, as a program's do: OpenSSL's (CRYPTO_malloc under
 * CRYPTO_zalloc), the JVM's (os::malloc under AllocateHeap), a class's operator new; a function
 * that allocates for a purpose of its own (OPENSSL_sk_dup) stays a site. */
static void runtime_wrappers_fold_by_default(void **state)
{
    (void)state;
    struct report r = {0};
    r.sites = calloc(5, sizeof *r.sites);
    r.symbolized = true;
    add_site(&r, (const char *[]){"CRYPTO_malloc", "CRYPTO_zalloc", "BN_new", "main"}, 4, 3);
    add_site(&r, (const char *[]){"CRYPTO_strndup", "BN_new", "main"}, 3, 2);
    add_site(&r, (const char *[]){"os::malloc", "AllocateHeap", "Threads::create_vm"}, 3, 5);
    add_site(&r, (const char *[]){"CHeapObj<(MEMFLAGS)5>::operator new", "Thread::Thread"}, 2, 4);
    add_site(&r, (const char *[]){"OPENSSL_sk_dup", "main"}, 2, 1);
    size_t n = 0;
    while (report_default_skip[n] != NULL)
        n++;
    report_fold(&r, &(struct report_fold_settings){report_default_skip, n, n, false});
    assert_int_equal(r.site_count, 4);
    assert_int_equal(r.folded_sites, 1);
    const char *first[] = {"BN_new", "Threads::create_vm", "Thread::Thread", "OPENSSL_sk_dup"};
    const uint64_t allocs[] = {5, 5, 4, 1};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(r.sites[i].stack.frames[0].locations[0].function, first[i]);
        assert_int_equal(r.sites[i].allocs, allocs[i]);
    }
    assert_string_equal(r.sites[1].wrapper, "AllocateHeap");
    assert_null(r.sites[3].wrapper);
    report_free(&r);
}

/* A library's constructor allocates under the preload's own dlopen: the site is where the program
 * called dlopen, not the preload's frame. */
static void the_preloads_own_frame_is_not_the_site(void **state)
{
    (void)state;
    struct report *r = hand_report(1);
    r->modules = realloc(r->modules, 3 * sizeof *r->modules);
    r->modules[2] = (struct report_module){.path = strdup("/usr/lib/libqaudit-preload.so"),
                                           .build_id = strdup("")};
    r->module_count = 3;
    struct report_frame frames[] = {
        hand_frame(1, 0x10, NULL, "calloc", 0), hand_frame(1, 0x20, NULL, "dlopen", 0),
        hand_frame(2, 0x30, NULL, "dlopen", 44), hand_frame(0, 0x40, NULL, "load_plugins", 12)};
    hand_site(r, frames, 4, 2, 64, 0, false);
    json_t *out = render_json(r);
    json_t *site = json_array_get(json_object_get(out, "sites"), 0);
    assert_non_null(site);
    assert_non_null(strstr(json_string_value(json_object_get(site, "where")), "load_plugins"));
    json_decref(out);
    hand_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(checks_without_hooks_are_not_applicable),
        cmocka_unit_test(a_status_in_the_dump_is_read),
        cmocka_unit_test(sampled_by_count_is_scaled_with_a_range),
        cmocka_unit_test(sampled_by_bytes_is_unbiased_as_the_sampler_was),
        cmocka_unit_test(an_attached_process_is_told_to_attach_again),
        cmocka_unit_test(precision_is_partial_with_a_note),
        cmocka_unit_test(the_leak_ranks_first_in_live_at_exit),
        cmocka_unit_test(live_shares_without_a_site_for_every_block_are_of_the_total),
        cmocka_unit_test(partial_figures_are_said_before_the_largest_leak),
        cmocka_unit_test(a_runtime_heap_is_said_to_be_unseen),
        cmocka_unit_test(a_dump_given_twice_counts_once),
        cmocka_unit_test(coverage_says_what_the_sites_hold),
        cmocka_unit_test(temporary_allocations_when_counted),
        cmocka_unit_test(wrappers_fold_into_their_callers),
        cmocka_unit_test(runtime_wrappers_fold_by_default),
        cmocka_unit_test(the_preloads_own_frame_is_not_the_site),
        cmocka_unit_test(a_detach_dump_is_named_as_such),
        cmocka_unit_test(programs_are_named_as_run),
    };
    return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
