/* qaudit gate on the three ringkv builds against the committed baseline, a written baseline
 * (held to gdb's reading of the same binary, gate_truth.py), the output formats, and every kind
 * of bad input. Scratch files in one mkdtemp directory, removed after the group, failed or not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define BASELINE SOURCE_DIR "/probe/baselines/ringkv.json"

static char output[16384];
static char work[64]; /* the group's scratch directory */

static int make_work(void **state)
{
    (void)state;
    snprintf(work, sizeof work, "/tmp/qaudit-gate-XXXXXX");
    return mkdtemp(work) ? 0 : -1;
}

static int remove_work(void **state)
{
    (void)state;
    char command[128];
    snprintf(command, sizeof command, "rm -rf %s", work);
    return system(command) == 0 ? 0 : -1;
}

/* work/name, in one of two rotating buffers. */
static const char *scratch(const char *name)
{
    static char paths[2][128];
    static int next;
    char *path = paths[next++ % 2];
    snprintf(path, sizeof paths[0], "%s/%s", work, name);
    return path;
}

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

/* What --write-baseline pins is what gdb reads in the same binary (34 figures: 3 sizes and 31
 * members of connection, rxq and rx_desc); the baseline then holds ringkv and breaks on deque. */
static void test_written_baseline_round_trip(void **state)
{
    (void)state;
    const char *path = scratch("baseline.json");
    assert_int_equal(run("%s gate --write-baseline %s --type connection --type 'rx*' %s/ringkv",
                         QAUDIT, path, BIN),
                     0);
    if (run("python3 %s/probe/tests/gate_truth.py %s %s/ringkv 34", SOURCE_DIR, path, BIN) != 0)
        fail_msg("the written baseline is not what gdb reads:\n%s", output);
    assert_int_equal(run("%s gate --baseline %s %s/ringkv", QAUDIT, path, BIN), 0);
    assert_int_equal(run("%s gate --baseline %s %s/ringkv-deque", QAUDIT, path, BIN), 1);
    expect_line("struct connection: size 232 != 184 (+48 B): queue grew 32 -> 80 B; ");
    expect_line("struct connection: member queue grew 32 -> 80 B\n");
    assert_int_equal(run("grep -c '\"rx_desc\"' %s", path), 0); /* the glob took it in */
}

static void test_output_formats(void **state)
{
    (void)state;
    assert_int_equal(run("cd %s && %s gate --baseline %s --format github %s/ringkv-ring",
                         SOURCE_DIR, QAUDIT, BASELINE, BIN),
                     1);
    expect_line(",title=qaudit gate (size)::struct connection: size 176 != 184 (-8 B)\n");
    expect_line("::error file=server/");
    const char *junit = scratch("junit-ring.xml");
    assert_int_equal(run("%s gate --baseline %s --junit %s %s/ringkv-ring >/dev/null; cat %s",
                         QAUDIT, BASELINE, junit, BIN, junit),
                     0);
    expect_line("<testsuite name=\"qaudit gate\" tests=\"13\" failures=\"3\">");
    expect_line("<failure type=\"offsets.head\" message=\"struct rxq: head at offset 8, pinned at "
                "16 (-8 B)\">to accept this change: qaudit gate --write-baseline");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void expect_input_error(const char *baseline_text, const char *binary, const char *words)
{
    const char *path = scratch("bad.json");
    write_file(path, baseline_text);
    assert_int_equal(run("%s gate --baseline %s %s", QAUDIT, path, binary), 2);
    expect_line(words);
}

/* max_code_size on rxq_grow_push (with its .constprop clone): broken below its size, kept above. */
static void test_code_size_rule(void **state)
{
    (void)state;
    const char *path = scratch("functions.json");
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
    expect_input_error("{\"format\": \"qaudit-baseline/1\", \"types\": {\"connection\": "
                       "{\"pin\": \"loose\", \"max_size\": 1000}}}",
                       BIN "/ringkv", "pin of connection must be \"exact\", \"max\" or \"class\"");
    expect_input_error("{\"format\": \"qaudit-baseline/1\", \"types\": {\"connection\": "
                       "{\"members\": {\"fd\": {\"offset\": 0}}}}}",
                       BIN "/ringkv", "members.fd of connection must be");
    const char *stripped = scratch("stripped");
    assert_int_equal(run("cp %s/ringkv %s && strip %s", BIN, stripped, stripped), 0);
    assert_int_equal(run("%s gate --baseline %s %s", QAUDIT, BASELINE, stripped), 2);
    expect_line("has no DWARF debug info");
    assert_int_equal(run("%s gate %s/ringkv", QAUDIT, BIN), 2);
    assert_int_equal(run("%s gate --write-baseline %s %s/ringkv", QAUDIT, scratch("x.json"), BIN),
                     2);
    assert_int_equal(access(scratch("x.json"), F_OK), -1); /* a usage error writes nothing */
}

/* The fixture's variants, built once: base (struct conn of 36 bytes), grown (40, same classes),
 * big (76, larger classes), added (a member in the middle). */
static void build_variants(void)
{
    static bool built;
    if (built)
        return;
    const char *fixture = SOURCE_DIR "/probe/tests/fixtures/gate_shapes.c";
    assert_int_equal(run("cd %s && gcc -g -o base %s && gcc -g -DNAME=28 -o grown %s && "
                         "gcc -g -DNAME=64 -o big %s && gcc -g -DADDED -o added %s",
                         work, fixture, fixture, fixture, fixture),
                     0);
    built = true;
}

/* Writes a baseline of struct conn pinned as pin ("" for the default), returns its path. */
static const char *pinned(const char *pin)
{
    static char path[128];
    build_variants();
    snprintf(path, sizeof path, "%s/conn-%s.json", work, pin[0] ? pin : "default");
    unlink(path);
    assert_int_equal(run("%s gate --write-baseline %s %s%s --type conn %s/base", QAUDIT, path,
                         pin[0] ? "--pin " : "", pin, work),
                     0);
    return path;
}

/* exact pins every member, max the size and classes, class only the classes; each is stored in
 * the baseline, and a failure says which member grew. */
static void test_pin_modes(void **state)
{
    (void)state;
    const char *exact = pinned("exact");
    assert_int_equal(run("cat %s", exact), 0);
    expect_line("\"pin\": \"exact\",\n      \"size\": 36,\n");
    expect_line("\"name\": {\"offset\": 8, \"size\": 24},\n");
    expect_line(
        "\"max_class\": {\"glibc\": 48, \"mimalloc\": 48, \"jemalloc\": 48, \"tcmalloc\": 48}");
    assert_int_equal(run("%s gate --baseline %s %s/base", QAUDIT, exact, work), 0);
    assert_int_equal(run("%s gate --baseline %s %s/grown", QAUDIT, exact, work), 1);
    expect_line("struct conn: size 40 != 36 (+4 B): name grew 24 -> 28 B; 1 member moved\n");
    expect_line("struct conn: member name grew 24 -> 28 B\n");
    expect_line("struct conn: member queue moved 32 -> 36 (+4 B)\n");

    const char *max = pinned("max");
    assert_int_equal(run("cat %s", max), 0);
    expect_line("\"pin\": \"max\",\n      \"max_size\": 36,\n");
    assert_int_equal(run("grep -c '\"size\": 36' %s", max), 1); /* exit 1: no exact size rule */
    assert_int_equal(run("%s gate --baseline %s %s/grown", QAUDIT, max, work), 1);
    expect_line("struct conn: size 40 > 36 (+4 B): name grew 24 -> 28 B; 1 member moved\n");
    expect_line("qaudit gate: 1 rule broken, 5 checked, 1 type\n");

    const char *class = pinned("class");
    assert_int_equal(run("%s gate --baseline %s %s/grown", QAUDIT, class, work), 0);
    expect_line("qaudit gate: 0 rules broken, 4 checked, 1 type\n");
    assert_int_equal(run("%s gate --baseline %s %s/big", QAUDIT, class, work), 1);
    expect_line("struct conn: glibc class 96 > 48 (size 76): name grew 24 -> 64 B; 1 member "
                "moved\n");
    assert_int_equal(run("%s gate --write-baseline %s --pin loose --type conn %s/base", QAUDIT,
                         scratch("x.json"), work),
                     2);
    expect_line("--pin wants exact, max or class");
}

/* A member put in the middle is named as added, the members after it as moved. */
static void test_added_member_is_named(void **state)
{
    (void)state;
    const char *exact = pinned("");
    assert_int_equal(run("%s gate --baseline %s %s/added", QAUDIT, exact, work), 1);
    expect_line("struct conn: size 40 != 36 (+4 B): extra was added at offset 4 (4 B); 3 members "
                "moved\n");
    expect_line("struct conn: member extra was added at offset 4 (4 B)\n");
    expect_line("struct conn: member flags moved 4 -> 8 (+4 B)\n");
}

/* Runs the accept command of the last gate output, as printed (with this build's qaudit). */
static int run_accept_command(void)
{
    const char *line = strstr(output, "to accept this change: qaudit ");
    if (line == NULL)
        fail_msg("no accept command in:\n%s", output);
    char command[1024];
    snprintf(command, sizeof command, "%s %.*s", QAUDIT, (int)strcspn(line + 30, "\n"), line + 30);
    return run("%s", command);
}

/* The printed command accepts the change: run as printed, the gate passes; what the baseline
 * says about other types, and its hand-written rules, stay. */
static void test_accept_command(void **state)
{
    (void)state;
    build_variants();
    char path[128]; /* with a space, which the command quotes */
    snprintf(path, sizeof path, "%s/accept it.json", work);
    assert_int_equal(
        run("%s gate --write-baseline '%s' --type conn --type other %s/base", QAUDIT, path, work),
        0);
    assert_int_equal(run("cp '%s' %s/before.json && %s gate --baseline '%s' %s/grown", path, work,
                         QAUDIT, path, work),
                     1);
    char expected[512];
    snprintf(expected, sizeof expected,
             "to accept this change: qaudit gate --write-baseline '%s' --type conn %s/grown\n",
             path, work);
    expect_line(expected);
    assert_int_equal(run_accept_command(), 0);
    assert_int_equal(run("%s gate --baseline '%s' %s/grown", QAUDIT, path, work), 0);
    /* struct other's rules (the last type) are the same lines as before. */
    assert_int_equal(run("cd %s && grep -A9 '\"other\"' before.json > 1 && grep -A9 '\"other\"' "
                         "'accept it.json' > 2 && cmp 1 2 && grep -c '\"b\": {\"offset\": 4' 2",
                         work),
                     0);
    /* The committed, hand-written baseline: accepting ringkv-deque keeps "about" and "within". */
    snprintf(path, sizeof path, "%s/ringkv.json", work);
    assert_int_equal(
        run("cp %s %s && %s gate --baseline %s %s/ringkv-deque", BASELINE, path, QAUDIT, path, BIN),
        1);
    snprintf(expected, sizeof expected,
             "to accept this change: qaudit gate --write-baseline %s --type connection --type rxq "
             "%s/ringkv-deque\n",
             path, BIN);
    expect_line(expected);
    assert_int_equal(run_accept_command(), 0);
    assert_int_equal(run("%s gate --baseline %s %s/ringkv-deque", QAUDIT, path, BIN), 0);
    assert_int_equal(run("cat %s", path), 0);
    expect_line("\"about\": \"The claims");
    expect_line("\"within\": {\"fd\": 0, \"flags\": 0, \"scan\": 0, \"worker\": 0}");
    expect_line("\"size\": 232");
}

/* GitHub annotations point at the struct's definition (relative to the working directory). */
static void test_annotations_carry_file_and_line(void **state)
{
    (void)state;
    const char *exact = pinned("exact");
    assert_int_equal(run("grep -n '^struct conn {' %s/probe/tests/fixtures/gate_shapes.c | cut "
                         "-d: -f1",
                         SOURCE_DIR),
                     0);
    int line = atoi(output);
    assert_true(line > 0);
    assert_int_equal(run("cd %s && %s gate --baseline %s --format github %s/grown", SOURCE_DIR,
                         QAUDIT, exact, work),
                     1);
    char expected[256];
    snprintf(expected, sizeof expected,
             "::error file=probe/tests/fixtures/gate_shapes.c,line=%d,title=qaudit gate "
             "(size)::struct conn: size 40 != 36 (+4 B): name grew 24 -> 28 B; 1 member moved\n",
             line);
    expect_line(expected);
    expect_line("::notice title=qaudit gate::to accept this change: qaudit gate --write-baseline ");
}

/* JUnit: one testcase per rule (the type as classname, the rule as name), held or broken. */
static void test_junit_per_rule(void **state)
{
    (void)state;
    const char *exact = pinned("exact");
    char junit[128];
    snprintf(junit, sizeof junit, "%s/junit.xml", work);
    assert_int_equal(run("%s gate --baseline %s --junit %s %s/grown", QAUDIT, exact, junit, work),
                     1);
    expect_line("qaudit gate: 3 rules broken, 11 checked, 1 type\n");
    assert_int_equal(run("cat %s", junit), 0);
    expect_line("<testsuite name=\"qaudit gate\" tests=\"11\" failures=\"3\">\n");
    expect_line("<testcase classname=\"conn\" name=\"max_class.glibc\" file=\"");
    expect_line("<testcase classname=\"conn\" name=\"members.fd\" file=\"");
    expect_line("<testcase classname=\"conn\" name=\"members.name\" file=\"");
    expect_line("<failure type=\"members.name\" message=\"struct conn: member name grew 24 -&gt; "
                "28 B\">to accept this change: qaudit gate --write-baseline ");
    assert_int_equal(run("grep -c '<testcase ' %s", junit), 0);
    assert_int_equal(atoi(output), 11);
    assert_int_equal(run("grep -c '<failure ' %s", junit), 0);
    assert_int_equal(atoi(output), 3);
}

/* A type nobody here wrote, in a debug file nobody here built: glibc's FILE in libc6-dbg (its
 * DWARF names files relative to the compilation directory). Without libc6-dbg, reported skipped
 * (exit 77); scripts/deps.sh installs it. */
static void test_glibc_debug_file(void **state)
{
    (void)state;
    build_variants();
    if (run("readelf -n /lib/x86_64-linux-gnu/libc.so.6 | awk '/Build ID/ {print $3}'") != 0 ||
        strlen(output) < 3)
        fail_msg("no build id in /lib/x86_64-linux-gnu/libc.so.6: %s", output);
    char debug[300], path[128];
    snprintf(debug, sizeof debug, "/usr/lib/debug/.build-id/%.2s/%.*s.debug", output,
             (int)strcspn(output + 2, "\n"), output + 2);
    if (access(debug, R_OK) != 0) {
        print_message("no %s (apt-get install libc6-dbg): skipped\n", debug);
        skip();
    }
    snprintf(path, sizeof path, "%s/file.json", work);
    assert_int_equal(run("%s gate --write-baseline %s --type _IO_FILE %s", QAUDIT, path, debug), 0);
    assert_int_equal(run("%s gate --baseline %s %s", QAUDIT, path, debug), 0);
    assert_int_equal(run("sed -i 's/\"_flags\": {\"offset\": 0, \"size\": 4}/\"_flags\": "
                         "{\"offset\": 0, \"size\": 2}/' %s && %s gate --baseline %s --format "
                         "github %s",
                         path, QAUDIT, path, debug),
                     1);
    expect_line("::error file=libio/bits/types/struct_FILE.h,line=");
    expect_line(",title=qaudit gate (members._flags)::struct _IO_FILE: member _flags grew 2 -> 4 "
                "B\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ringkv_passes_and_the_others_fail),
        cmocka_unit_test(test_written_baseline_round_trip),
        cmocka_unit_test(test_output_formats),
        cmocka_unit_test(test_code_size_rule),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_pin_modes),
        cmocka_unit_test(test_added_member_is_named),
        cmocka_unit_test(test_accept_command),
        cmocka_unit_test(test_annotations_carry_file_and_line),
        cmocka_unit_test(test_junit_per_rule),
        cmocka_unit_test(test_glibc_debug_file),
    };
    return cmocka_run_group_tests_name("gate", tests, make_work, remove_work);
}
