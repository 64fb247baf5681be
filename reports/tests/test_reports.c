/* Unit tests of reading and merging dumps: the committed example dump, variants of it written
 * with jansson (other processes, other load addresses, later snapshots), and every bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_fixture.h"

static enum report_status load(const char **paths, size_t n, struct report *r, char *error)
{
    memset(r, 0, sizeof *r);
    return report_load(paths, n, r, error, 512);
}

static void reads_the_example_dump(void **state)
{
    (void)state;
    const char *path = EXAMPLE_DUMP;
    struct report r;
    char error[512];
    assert_int_equal(load(&path, 1, &r, error), REPORT_OK);
    assert_int_equal(r.process_count, 1);
    assert_int_equal(r.totals.allocs, 3);
    assert_int_equal(r.totals.bytes_requested, 320);
    assert_int_equal(r.queues.pushes, 9);
    assert_int_equal(r.queues.by_peak_depth_count, 1);
    assert_int_equal(r.queues.by_peak_depth[0].peak_depth, 9);
    assert_int_equal(r.check_count, 3);
    assert_false(report_check_passed(&r.checks[0]));
    assert_int_equal(r.violation_count, 1);
    /* Frames become module-relative: the first frame of the site is in the main program. */
    assert_int_equal(r.site_count, 1);
    assert_int_equal(r.sites[0].stack.frames[0].module, 0);
    assert_int_equal(r.sites[0].stack.frames[0].offset, 0x55b72f6690edull - 0x55b72f668000ull);
    report_free(&r);
}

/* The example as if another process had written it: another pid and load address. */
static json_t *another_process(uint64_t pid, uint64_t shift)
{
    json_t *doc = example();
    json_object_set_new(json_object_get(doc, "process"), "pid", json_integer((json_int_t)pid));
    json_t *m = json_array_get(json_object_get(doc, "modules"), 0);
    const char *keys[] = {"base", "start", "end"};
    for (int k = 0; k < 3; k++) {
        uint64_t v = strtoull(json_string_value(json_object_get(m, keys[k])), NULL, 16) + shift;
        char hex[32];
        snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)v);
        json_object_set_new(m, keys[k], json_string(hex));
    }
    json_t *frames = json_object_get(json_array_get(json_object_get(doc, "sites"), 0), "frames");
    size_t i;
    json_t *f;
    json_array_foreach(frames, i, f)
    {
        uint64_t v = strtoull(json_string_value(f), NULL, 16);
        if (v >= 0x55b72f668000ull && v < 0x55b72f66c060ull) {
            char hex[32];
            snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)(v + shift));
            json_array_set_new(frames, i, json_string(hex));
        }
    }
    return doc;
}

static void merges_processes_and_their_sites(void **state)
{
    (void)state;
    json_t *other = another_process(4242, 0x100000);
    const char *paths[] = {EXAMPLE_DUMP, write_doc(other, "other.json")};
    struct report r;
    char error[512];
    assert_int_equal(load(paths, 2, &r, error), REPORT_OK);
    assert_int_equal(r.process_count, 2);
    assert_int_equal(r.superseded, 0);
    assert_int_equal(r.totals.allocs, 6);
    assert_int_equal(r.queues.pushes, 18);
    assert_int_equal(r.queues.by_peak_depth_count, 1);
    assert_int_equal(r.queues.by_peak_depth[0].connections, 2);
    /* Same code at another load address: one site, counts added. */
    assert_int_equal(r.site_count, 1);
    assert_int_equal(r.sites[0].allocs, 4);
    assert_int_equal(r.module_count, 1);
    assert_int_equal(r.checks[0].dumps, 2);
    assert_int_equal(r.checks[0].failed, 2);
    assert_non_null(strstr(r.checks[0].detail, "failed in 2 of 2 dumps"));
    assert_int_equal(r.violation_count, 2);
    report_free(&r);
    json_decref(other);
}

static void a_later_snapshot_supersedes_an_earlier_one(void **state)
{
    (void)state;
    json_t *later = example();
    json_t *process = json_object_get(later, "process");
    json_object_set_new(
        process, "dump_time_ns",
        json_integer(json_integer_value(json_object_get(process, "dump_time_ns")) + 1000));
    json_object_set_new(json_object_get(later, "totals"), "allocs", json_integer(5));
    const char *paths[] = {write_doc(later, "later.json"), EXAMPLE_DUMP};
    struct report r;
    char error[512];
    assert_int_equal(load(paths, 2, &r, error), REPORT_OK);
    assert_int_equal(r.process_count, 1);
    assert_int_equal(r.superseded, 1);
    assert_int_equal(r.totals.allocs, 5);
    report_free(&r);
    json_decref(later);
}

/* Loads path and expects an input error whose text holds expected. */
static void expect_error(const char *path, const char *expected)
{
    struct report r;
    char error[512] = "";
    assert_int_equal(load(&path, 1, &r, error), REPORT_INPUT_ERROR);
    if (strstr(error, expected) == NULL)
        fail_msg("error '%s' does not say '%s'", error, expected);
    assert_null(strchr(error, '\n'));
    assert_non_null(strstr(error, path));
    report_free(&r);
}

static void a_truncated_dump_is_an_error_with_its_position(void **state)
{
    (void)state;
    FILE *in = fopen(EXAMPLE_DUMP, "r");
    char buf[2000];
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    const char *path = scratch_path("truncated.json");
    FILE *out = fopen(path, "w");
    fwrite(buf, 1, n / 2, out);
    fclose(out);
    expect_error(path, "truncated or not JSON");
    expect_error(path, "line ");
}

static void another_format_version_is_refused(void **state)
{
    (void)state;
    json_t *doc = example();
    json_object_set_new(doc, "format", json_string("qaudit-alloc/2"));
    expect_error(write_doc(doc, "v2.json"), "format is 'qaudit-alloc/2'");
    json_object_del(doc, "format");
    expect_error(write_doc(doc, "noformat.json"), "not a qaudit dump");
    json_decref(doc);
}

static void a_missing_or_mistyped_field_is_named(void **state)
{
    (void)state;
    json_t *doc = example();
    json_object_del(json_object_get(doc, "totals"), "allocs");
    expect_error(write_doc(doc, "noallocs.json"), "totals.allocs");
    json_decref(doc);
    doc = example();
    json_object_set_new(json_object_get(doc, "queues"), "pushes", json_string("nine"));
    expect_error(write_doc(doc, "pushes.json"), "queues.pushes");
    json_decref(doc);
    doc = example();
    json_t *frames = json_object_get(json_array_get(json_object_get(doc, "sites"), 0), "frames");
    json_array_set_new(frames, 0, json_string("main+12"));
    expect_error(write_doc(doc, "frame.json"), "not a \"0x...\" address");
    json_decref(doc);
}

static void a_missing_file_or_non_object_is_an_error(void **state)
{
    (void)state;
    const char *path = scratch_path("absent.json");
    expect_error(path, "cannot read");
    json_t *array = json_array();
    expect_error(write_doc(array, "array.json"), "top level is not an object");
    json_decref(array);
}

/* Every format of the example (symbolized against nothing: its modules are gone) holds the
 * checks, the queue figures and the violation; the sanitizer build runs this too. */
static void renders_every_format(void **state)
{
    (void)state;
    const char *path = EXAMPLE_DUMP;
    struct report r;
    char error[512];
    assert_int_equal(load(&path, 1, &r, error), REPORT_OK);
    FILE *quiet = fopen("/dev/null", "w");
    assert_int_equal(report_symbolize(&r, NULL, NULL, quiet, error, sizeof error), REPORT_OK);
    fclose(quiet);
    char *text = render(&r, REPORT_TEXT);
    assert_non_null(strstr(text, "depth_one_no_alloc  FAIL"));
    assert_non_null(strstr(text, "9 pushes, 9 pops"));
    free(text);
    char *md = render(&r, REPORT_MARKDOWN);
    assert_non_null(strstr(md, "| depth_one_no_alloc | FAIL |"));
    assert_non_null(strstr(md, "| 9 | 1 | 2 | 288 | 2.00 | 288.0 |"));
    free(md);
    char *html = render(&r, REPORT_HTML);
    assert_non_null(strstr(html, "<svg class=\"chart\""));
    assert_non_null(strstr(html, "</html>"));
    free(html);
    char *json = render(&r, REPORT_JSON);
    json_error_t e;
    json_t *doc = json_loads(json, 0, &e);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "format")), "qaudit-report/1");
    assert_false(json_is_true(json_object_get(doc, "passed")));
    assert_int_equal(json_array_size(json_object_get(doc, "depth_one_violations")), 1);
    json_decref(doc);
    free(json);
    report_free(&r);
}

/* A forked child of the example's process whose dump lists the example's site 3 only by id,
 * with what it freed there (inherited_sites entry given as JSON text). */
static const char *forked_child(const char *entry, const char *name)
{
    json_t *doc = another_process(28000, 0);
    json_t *process = json_object_get(doc, "process");
    json_object_set_new(process, "forked_from",
                        json_pack("{s:I, s:I}", "pid", (json_int_t)27928, "start_time_ns",
                                  (json_int_t)1795998909038250905ll));
    json_object_set_new(json_object_get(doc, "totals"), "inherited",
                        json_pack("{s:I, s:I, s:{s:I, s:I}, s:I}", "blocks", (json_int_t)2, "bytes",
                                  (json_int_t)320, "freed", "blocks", (json_int_t)1, "bytes",
                                  (json_int_t)160, "reallocated", (json_int_t)0));
    json_object_set_new(doc, "sites", json_array());
    json_error_t error;
    json_object_set_new(doc, "inherited_sites", json_pack("[o]", json_loads(entry, 0, &error)));
    const char *path = write_doc(doc, name);
    json_decref(doc);
    return path;
}

/* inherited_sites: [id, blocks, bytes, freed_blocks, freed_bytes] resolves to the parent's stack
 * with the freed figures; more freed than inherited is refused, naming the entry. */
static void inherited_sites_carry_what_the_child_freed(void **state)
{
    (void)state;
    json_t *parent = example();
    const char *paths[] = {write_doc(parent, "parent.json"),
                           forked_child("[3, 2, 320, 1, 160]", "child.json")};
    json_decref(parent);
    struct report r;
    char error[512];
    assert_int_equal(load(paths, 2, &r, error), REPORT_OK);
    assert_int_equal(r.totals.inherited.unattributed_blocks, 0);
    uint64_t freed = 0, freed_bytes = 0, inherited = 0;
    for (size_t i = 0; i < r.site_count; i++) {
        freed += r.sites[i].inherited_freed;
        freed_bytes += r.sites[i].inherited_freed_bytes;
        inherited += r.sites[i].inherited_blocks;
    }
    assert_int_equal(inherited, 2);
    assert_int_equal(freed, 1);
    assert_int_equal(freed_bytes, 160);
    report_free(&r);
    paths[1] = forked_child("[3, 2, 320, 3, 160]", "child-overfreed.json");
    assert_int_equal(load(paths, 2, &r, error), REPORT_INPUT_ERROR);
    assert_non_null(strstr(error, "inherited_sites[0]"));
    report_free(&r);
    paths[1] = forked_child("[3, 2, 320, 1]", "child-four.json");
    assert_int_equal(load(paths, 2, &r, error), REPORT_INPUT_ERROR);
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_the_example_dump),
        cmocka_unit_test(merges_processes_and_their_sites),
        cmocka_unit_test(a_later_snapshot_supersedes_an_earlier_one),
        cmocka_unit_test(a_truncated_dump_is_an_error_with_its_position),
        cmocka_unit_test(another_format_version_is_refused),
        cmocka_unit_test(a_missing_or_mistyped_field_is_named),
        cmocka_unit_test(a_missing_file_or_non_object_is_an_error),
        cmocka_unit_test(renders_every_format),
        cmocka_unit_test(inherited_sites_carry_what_the_child_freed),
    };
    return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
