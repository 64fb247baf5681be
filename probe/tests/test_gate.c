/* qaudit gate on the three ringkv builds against the committed baseline, a written baseline,
 * the output formats, and every kind of bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define BASELINE SOURCE_DIR "/probe/baselines/ringkv.json"

static char output[16384];

/* Runs a shell command, keeps stdout and stderr in output, returns the exit status. */
static int run(const char *fmt, ...)
{
    char command[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(command, sizeof command, fmt, ap);
    va_end(ap);
    strncat(command, " 2>&1", sizeof command - strlen(command) - 1);
    FILE *p = popen(command, "r");
    size_t n = fread(output, 1, sizeof output - 1, p);
    output[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void expect_line(const char *line)
{
    if (strstr(output, line) == NULL)
        fail_msg("missing \"%s\" in:\n%s", line, output);
}

static void test_ringkv_passes_and_the_others_fail(void **state)
{
    (void)state;
    assert_int_equal(run("%s gate --baseline %s %s/ringkv", QAUDIT, BASELINE, BIN), 0);
    expect_line("qaudit gate: 0 rules broken, 13 checked, 2 types");
    assert_int_equal(run("%s gate --baseline %s %s/ringkv-ring", QAUDIT, BASELINE, BIN), 1);
    expect_line("struct connection: size 176 != 184 (-8 B)\n");
    expect_line("struct rxq: head at offset 8, pinned at 16 (-8 B)\n");
    assert_int_equal(run("%s gate --baseline %s %s/ringkv-deque", QAUDIT, BASELINE, BIN), 1);
    expect_line("struct connection: size 232 != 184 (+48 B)\n");
    expect_line("struct connection: mimalloc class 256 > 192 (size 232)\n");
    expect_line("struct rxq: member head is gone (the baseline pins it)\n");
}

static void test_written_baseline_round_trip(void **state)
{
    (void)state;
    char path[] = "/tmp/qaudit-baseline-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    assert_int_equal(run("%s gate --write-baseline %s --type connection --type 'rx*' %s/ringkv",
                         QAUDIT, path, BIN),
                     0);
    assert_int_equal(run("%s gate --baseline %s %s/ringkv", QAUDIT, path, BIN), 0);
    assert_int_equal(run("%s gate --baseline %s %s/ringkv-deque", QAUDIT, path, BIN), 1);
    expect_line("struct connection: size 232 != 184 (+48 B)\n");
    assert_int_equal(run("grep -c '\"rx_desc\"' %s", path), 0); /* the glob took it in */
    unlink(path);
}

static void test_output_formats(void **state)
{
    (void)state;
    assert_int_equal(
        run("%s gate --baseline %s --format github %s/ringkv-ring", QAUDIT, BASELINE, BIN), 1);
    expect_line("::error title=qaudit gate (size)::struct connection: size 176 != 184 (-8 B)\n");
    char junit[] = "/tmp/qaudit-junit-XXXXXX";
    close(mkstemp(junit));
    assert_int_equal(run("%s gate --baseline %s --junit %s %s/ringkv-ring >/dev/null; cat %s",
                         QAUDIT, BASELINE, junit, BIN, junit),
                     0);
    expect_line("<testsuite name=\"qaudit gate\" tests=\"2\" failures=\"3\">");
    expect_line("<failure type=\"offsets.head\" message=\"struct rxq: head at offset 8, pinned at "
                "16 (-8 B)\"/>");
    unlink(junit);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void expect_input_error(const char *baseline_text, const char *binary, const char *words)
{
    char path[] = "/tmp/qaudit-bad-XXXXXX";
    close(mkstemp(path));
    write_file(path, baseline_text);
    assert_int_equal(run("%s gate --baseline %s %s", QAUDIT, path, binary), 2);
    expect_line(words);
    unlink(path);
}

/* max_code_size on rxq_grow_push (with its .constprop clone): broken below its size, kept above. */
static void test_code_size_rule(void **state)
{
    (void)state;
    const char *path = "/tmp/qaudit-gate-functions.json";
    write_file(path, "{\"format\": \"qaudit-baseline/1\", \"functions\": "
                     "{\"rxq_grow_push\": {\"max_code_size\": 16}}}");
    assert_int_equal(run("%s gate --baseline %s %s/ringkv", QAUDIT, path, BIN), 1);
    expect_line("function rxq_grow_push: code size ");
    expect_line(" > 16 (+");
    write_file(path, "{\"format\": \"qaudit-baseline/1\", \"functions\": "
                     "{\"rxq_grow_push\": {\"max_code_size\": 100000}}}");
    assert_int_equal(run("%s gate --baseline %s %s/ringkv", QAUDIT, path, BIN), 0);
    expect_line("1 function");
    /* --write-baseline --functions pins today's size, which the same binary then passes. */
    assert_int_equal(
        run("%s gate --write-baseline %s --functions rxq_grow_push %s/ringkv", QAUDIT, path, BIN),
        0);
    assert_int_equal(run("%s gate --baseline %s %s/ringkv", QAUDIT, path, BIN), 0);
    assert_int_equal(
        run("%s layout --format json --functions rxq_grow_push %s/ringkv | grep -o "
            "'\"code_size\": [0-9]*' | grep -o '[0-9]*' > %s.size && test -s %s.size && grep -q "
            "\"\\\"max_code_size\\\": $(cat %s.size)\" %s",
            QAUDIT, BIN, path, path, path, path),
        0);
    expect_input_error("{\"format\": \"qaudit-baseline/1\", \"functions\": "
                       "{\"no_such_function\": {\"max_code_size\": 1}}}",
                       BIN "/ringkv", "does not define");
    expect_input_error("{\"format\": \"qaudit-baseline/1\", \"functions\": "
                       "{\"rxq_grow_push\": {\"max_size\": 1}}}",
                       BIN "/ringkv", "max_code_size");
    assert_int_equal(run("%s gate --baseline %s --functions x %s/ringkv", QAUDIT, BASELINE, BIN),
                     2);
    unlink(path);
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_input_error(
        "{\"format\": \"qaudit-baseline/1\",\n \"types\": {\"connection\": {\"size\": 184,}}}",
        BIN "/ringkv", ":2:"); /* line and column of the syntax error */
    expect_input_error(
        "{\"format\": \"qaudit-baseline/1\", \"types\": {\"no_such\": {\"size\": 1}}}",
        BIN "/ringkv", "names 'no_such', which");
    expect_input_error(
        "{\"format\": \"qaudit-baseline/1\", \"types\": {\"connection\": {\"colour\": 1}}}",
        BIN "/ringkv", "unknown rule 'colour'");
    expect_input_error("{\"format\": \"qaudit-baseline/1\", \"types\": {\"connection\": "
                       "{\"max_class\": {\"hoard\": 1}}}}",
                       BIN "/ringkv", "unknown allocator 'hoard'");
    expect_input_error(
        "{\"format\": \"qaudit-baseline/1\", \"types\": {\"connection\": {\"size\": \"big\"}}}",
        BIN "/ringkv", "must be a non-negative integer");
    expect_input_error("{\"types\": {}}", BIN "/ringkv", "not a qaudit-baseline/1 file");
    assert_int_equal(run("cp %s/ringkv /tmp/qaudit-stripped && strip /tmp/qaudit-stripped", BIN),
                     0);
    assert_int_equal(run("%s gate --baseline %s /tmp/qaudit-stripped", QAUDIT, BASELINE), 2);
    expect_line("has no DWARF debug info");
    unlink("/tmp/qaudit-stripped");
    assert_int_equal(run("%s gate %s/ringkv", QAUDIT, BIN), 2);
    assert_int_equal(run("%s gate --write-baseline /tmp/x.json %s/ringkv", QAUDIT, BIN), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ringkv_passes_and_the_others_fail),
        cmocka_unit_test(test_written_baseline_round_trip),
        cmocka_unit_test(test_output_formats),
        cmocka_unit_test(test_code_size_rule),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests_name("gate", tests, NULL, NULL);
}
