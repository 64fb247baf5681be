/* common/gate_annotations, gate_junit and xml_escape: what both halves of qaudit gate write for
 * GitHub and JUnit, byte for byte, escapes included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/gate_annotations.h"
#include "common/gate_junit.h"
#include "common/xml_escape.h"

static char *text; /* what the last write_* produced */

static void done(void)
{
    free(text);
    text = NULL;
}

static FILE *memory(void)
{
    static size_t size;
    done();
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    return out;
}

/* The file at path (opened as fd by mkstemp), read, closed and removed. */
static const char *taken(const char *path, int fd)
{
    static char buffer[2048];
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    size_t n = fread(buffer, 1, sizeof buffer - 1, in);
    buffer[n] = '\0';
    fclose(in);
    close(fd);
    unlink(path);
    return buffer;
}

static void annotations_escape_data_and_properties(void **state)
{
    (void)state;
    FILE *out = memory();
    gate_annotation(out, "error", "/ci/src/a,b:c.c", 7, "x:y,z", "100% of\r\nit", "/ci");
    gate_annotation(out, "warning", "/elsewhere/f.c", 0, "r", "m", "/ci");
    gate_annotation(out, "error", NULL, 3, "r", "m", "/ci");
    gate_annotation(out, "error", "/ci/g.c", 1, "r", "m", "/"); /* "/" makes nothing relative */
    gate_annotation_accept(out, "qaudit gate --write-baseline 'a%b'");
    fclose(out);
    assert_string_equal(
        text,
        "::error file=src/a%2Cb%3Ac.c,line=7,title=qaudit gate (x%3Ay%2Cz)::100%25 of%0D%0Ait\n"
        "::warning file=/elsewhere/f.c,title=qaudit gate (r)::m\n"
        "::error title=qaudit gate (r)::m\n"
        "::error file=/ci/g.c,line=1,title=qaudit gate (r)::m\n"
        "::notice title=qaudit gate::to accept this change: qaudit gate --write-baseline "
        "'a%25b'\n");
    done();
}

static void workspace_paths_need_a_whole_directory(void **state)
{
    (void)state;
    assert_string_equal(github_workspace_path("/ci/x.c", "/ci"), "x.c");
    assert_string_equal(github_workspace_path("/cix.c", "/ci"), "/cix.c");
    assert_string_equal(github_workspace_path("/ci", "/ci"), "/ci");
    assert_string_equal(github_workspace_path("/ci/x.c", ""), "/ci/x.c");
}

static void xml_escapes_the_four_characters(void **state)
{
    (void)state;
    FILE *out = memory();
    xml_escape(out, "a&b<c>d\"e'f");
    fclose(out);
    assert_string_equal(text, "a&amp;b&lt;c&gt;d&quot;e'f");
    done();
}

static void junit_cases_each_verdict(void **state)
{
    (void)state;
    char path[] = "test_gate_output-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *out = gate_junit_open(path, 3, 1, 1, true);
    assert_non_null(out);
    struct junit_case held = {"conn", "size", "/s/a.h", 4, JUNIT_PASSED, NULL};
    struct junit_case na = {"run", "totals.live_blocks", NULL, 0, JUNIT_SKIPPED, "n/a: <why>"};
    struct junit_case broke = {"f (a.c:1)", "allocs", "a.c", 1, JUNIT_FAILED, "1 -> 2 \"x\""};
    gate_junit_case(out, &held, "qaudit gate a&b");
    gate_junit_case(out, &na, "qaudit gate a&b");
    gate_junit_case(out, &broke, "qaudit gate a&b");
    assert_true(gate_junit_close(out));
    const char *buffer = taken(path, fd);
    assert_string_equal(
        buffer, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<testsuite name=\"qaudit gate\" tests=\"3\" failures=\"1\" skipped=\"1\">\n"
                "  <testcase classname=\"conn\" name=\"size\" file=\"/s/a.h\" line=\"4\"/>\n"
                "  <testcase classname=\"run\" name=\"totals.live_blocks\">\n"
                "    <skipped message=\"n/a: &lt;why&gt;\"/>\n  </testcase>\n"
                "  <testcase classname=\"f (a.c:1)\" name=\"allocs\" file=\"a.c\" line=\"1\">\n"
                "    <failure type=\"allocs\" message=\"1 -&gt; 2 &quot;x&quot;\">to accept this "
                "change: qaudit gate a&amp;b</failure>\n  </testcase>\n"
                "</testsuite>\n");
}

static void junit_counts_skipped_only_when_asked(void **state)
{
    (void)state;
    char path[] = "test_gate_output-XXXXXX";
    int fd = mkstemp(path);
    FILE *out = gate_junit_open(path, 0, 0, 0, false);
    assert_true(gate_junit_close(out));
    const char *buffer = taken(path, fd);
    assert_string_equal(buffer, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                "<testsuite name=\"qaudit gate\" tests=\"0\" failures=\"0\">\n"
                                "</testsuite>\n");
    assert_null(gate_junit_open("no-such-directory/x.xml", 0, 0, 0, false));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(annotations_escape_data_and_properties),
        cmocka_unit_test(workspace_paths_need_a_whole_directory),
        cmocka_unit_test(xml_escapes_the_four_characters),
        cmocka_unit_test(junit_cases_each_verdict),
        cmocka_unit_test(junit_counts_skipped_only_when_asked),
    };
    return cmocka_run_group_tests_name("gate_output", tests, NULL, NULL);
}
