/* common/baseline_file: deep objects a key per line, flat ones on one line, reals of 10 digits
 * that read back as written (a file both halves write keeps its figures), and a failed write
 * that leaves the file as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/baseline_file.h"

static char *slurp(const char *path)
{
    static char buffer[4096];
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    size_t n = fread(buffer, 1, sizeof buffer - 1, in);
    buffer[n] = '\0';
    fclose(in);
    return buffer;
}

static void rules_a_line_each_and_reals_as_written(void **state)
{
    (void)state;
    char path[] = "test_baseline_file-XXXXXX";
    close(mkstemp(path));
    json_error_t jerr;
    const char *written =
        "{\n"
        "  \"format\": \"qaudit-baseline/1\",\n"
        "  \"types\": {\n"
        "    \"conn\": {\n"
        "      \"size\": 36,\n"
        "      \"max_class\": {\"glibc\": 48}\n"
        "    }\n"
        "  },\n"
        "  \"allocations\": {\n"
        "    \"totals\": {\"allocs\": 0.4672222222, \"bytes\": 97.22166667, \"live\": 2},\n"
        "    \"empty\": {}\n"
        "  }\n"
        "}\n";
    json_t *doc = json_loads(written, 0, &jerr);
    assert_non_null(doc);
    char error[256];
    assert_true(baseline_file_save(doc, path, error, sizeof error));
    assert_string_equal(slurp(path), written);
    json_decref(doc);
    unlink(path);
}

static void a_failed_write_says_so_in_a_line(void **state)
{
    (void)state;
    json_t *doc = json_pack("{s:s}", "format", "qaudit-baseline/1");
    char error[256];
    assert_false(baseline_file_save(doc, "no-such-directory/b.json", error, sizeof error));
    assert_string_equal(error, "cannot write no-such-directory/b.json.tmp: No such file or "
                               "directory");
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rules_a_line_each_and_reals_as_written),
        cmocka_unit_test(a_failed_write_says_so_in_a_line),
    };
    return cmocka_run_group_tests_name("baseline_file", tests, NULL, NULL);
}
