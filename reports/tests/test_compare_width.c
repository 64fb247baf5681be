/* qaudit compare on a terminal: the text of 2 and of 5 builds (and of builds with long names)
 * fits 100 columns, with every figure of every build still in it; Markdown and JSON keep a row
 * per build with every column. The builds are the three ringkv binaries, read from their DWARF. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_fixture.h"
#include "reports/compare.h"

/* The example dump with its one connection at depth one: 2 allocations, 288 bytes. */
static const char *depth_one_dump(void)
{
    json_t *doc = example();
    json_t *peak =
        json_array_get(json_object_get(json_object_get(doc, "queues"), "by_peak_depth"), 0);
    json_object_set_new(peak, "peak_depth", json_integer(1));
    const char *path = write_doc(doc, "depth-one.json");
    json_decref(doc);
    return path;
}

static char *compare(const struct compare_build *builds, size_t count, enum report_format format)
{
    struct compare_row rows[8] = {0};
    struct compare_options options = {NULL, NULL};
    char error[512] = "";
    if (compare_builds(builds, count, &options, rows, error, sizeof error) != REPORT_OK)
        fail_msg("compare: %s", error);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    compare_render(out, rows, count, &options, format);
    fclose(out);
    compare_rows_free(rows, count);
    return text;
}

static size_t longest_line(const char *text)
{
    size_t longest = 0;
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        longest = n > longest ? n : longest;
        line += n + (line[n] == '\n');
    }
    return longest;
}

static void two_builds_fit_100_columns(void **state)
{
    (void)state;
    const char *dump = depth_one_dump();
    struct compare_build builds[] = {{RINGKV, dump}, {RINGKV_DEQUE, EXAMPLE_DUMP}};
    char *text = compare(builds, 2, REPORT_TEXT);
    assert_true(longest_line(text) <= 100);
    /* Every figure is there: sizes, each allocator's class, the depth-one figures. */
    assert_non_null(strstr(text, "ringkv-deque"));
    assert_non_null(strstr(text, "184 B"));
    assert_non_null(strstr(text, "232 B"));
    assert_non_null(strstr(text, "class under tcmalloc"));
    assert_non_null(strstr(text, "2.00"));
    assert_non_null(strstr(text, "288.0"));
    free(text);
}

static void five_builds_fit_100_columns(void **state)
{
    (void)state;
    const char *dump = depth_one_dump();
    struct compare_build builds[] = {{RINGKV, dump},
                                     {RINGKV_RING, EXAMPLE_DUMP},
                                     {RINGKV_DEQUE, NULL},
                                     {RINGKV, EXAMPLE_DUMP},
                                     {RINGKV_DEQUE, dump}};
    char *text = compare(builds, 5, REPORT_TEXT);
    assert_true(longest_line(text) <= 100);
    /* A column per build: each label once in a header. */
    assert_int_equal(occurrences(text, "ringkv-deque"), 2);
    assert_int_equal(occurrences(text, "ringkv-ring"), 1);
    assert_int_equal(occurrences(text, "2.00"), 2);
    assert_int_equal(occurrences(text, "(no dump)"), 2);
    free(text);
}

/* Builds whose names are too long for one table wrap into several; a name too long for any
 * column is cut, and given in full under the tables. */
static void long_names_wrap_and_fit(void **state)
{
    (void)state;
    char long_name[256], longer[256];
    snprintf(long_name, sizeof long_name, "%s", scratch_path("ringkv-built-with-a-long-name-1"));
    snprintf(longer, sizeof longer, "%s",
             scratch_path("ringkv-deque-built-with-a-name-much-too-long-for-one-column-of-it"));
    assert_int_equal(symlink(RINGKV, long_name), 0);
    assert_int_equal(symlink(RINGKV_DEQUE, longer), 0);
    struct compare_build builds[] = {
        {long_name, NULL}, {longer, NULL}, {long_name, NULL}, {RINGKV, NULL}, {RINGKV_RING, NULL}};
    char *text = compare(builds, 5, REPORT_TEXT);
    assert_true(longest_line(text) <= 100);
    assert_true(occurrences(text, "queue object") >= 2); /* wrapped into several tables */
    assert_non_null(strstr(text, "build 2: ringkv-deque-built-with-a-name-much-too-long-for-one-"));
    free(text);
}

static void markdown_and_json_keep_every_column(void **state)
{
    (void)state;
    struct compare_build builds[] = {{RINGKV, EXAMPLE_DUMP},
                                     {RINGKV_RING, NULL},
                                     {RINGKV_DEQUE, NULL},
                                     {RINGKV, NULL},
                                     {RINGKV_RING, NULL}};
    char *md = compare(builds, 5, REPORT_MARKDOWN);
    assert_non_null(strstr(md, "| version | queue object | connection object | allocation class "
                               "(per allocator) | allocations per connection at depth one | "
                               "extra heap bytes at depth one |"));
    assert_non_null(strstr(md, "| ringkv | 32 B | 184 B | glibc 192, mimalloc 192, jemalloc 192, "
                               "tcmalloc 192 | (no connection at depth one) | - |"));
    assert_int_equal(occurrences(md, "\n| ringkv"), 5);
    free(md);
    char *text = compare(builds, 5, REPORT_JSON);
    json_error_t e;
    json_t *doc = json_loads(text, 0, &e);
    assert_non_null(doc);
    json_t *list = json_object_get(doc, "builds");
    assert_int_equal(json_array_size(list), 5);
    const char *keys[] = {"version",
                          "queue_type",
                          "queue_object",
                          "connection_object",
                          "classes",
                          "depth_one_connections",
                          "allocs_per_connection_at_depth_one",
                          "extra_heap_bytes_at_depth_one"};
    for (size_t i = 0; i < 5; i++)
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            assert_non_null(json_object_get(json_array_get(list, i), keys[k]));
    json_decref(doc);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_builds_fit_100_columns),
        cmocka_unit_test(five_builds_fit_100_columns),
        cmocka_unit_test(long_names_wrap_and_fit),
        cmocka_unit_test(markdown_and_json_keep_every_column),
    };
    return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
