/* Where qaudit looks for a process's dumps (cli/dump_path.c): QAUDIT_OUT's %p, %n and %% as the
 * interposer expands them, a pattern's directory, the globs of the preload's suffixed names, and
 * a program's dump looked for in a directory that does not exist or holds none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

static void test_expand_pid_and_sequence(void **state)
{
    (void)state;
    char out[256];
    dump_path_expand("qaudit-%p.json", 4242, 3, out, sizeof out);
    assert_string_equal(out, "qaudit-4242.json");
    dump_path_expand("/tmp/d/%p-%n.json", 7, 12, out, sizeof out);
    assert_string_equal(out, "/tmp/d/7-12.json");
    dump_path_expand("100%%-%p", 9, 0, out, sizeof out);
    assert_string_equal(out, "100%-9");
    /* a negative pid or sequence is a glob for any */
    dump_path_expand("d/%p/%n.json", -1, -1, out, sizeof out);
    assert_string_equal(out, "d/*/*.json");
    /* neither %p nor %n: the pattern as it is, a lone % kept */
    dump_path_expand("plain%.json", 1, 1, out, sizeof out);
    assert_string_equal(out, "plain%.json");
}

static void test_expand_stays_inside_the_buffer(void **state)
{
    (void)state;
    char out[32];
    memset(out, 'x', sizeof out);
    dump_path_expand("a-very-long-directory-name/qaudit-%p-%n.json", 123456, 99, out, sizeof out);
    assert_true(strlen(out) < sizeof out);
    assert_memory_equal(out, "a-very", 6);
}

static void test_directory(void **state)
{
    (void)state;
    char out[256];
    dump_path_directory("qaudit-%p.json", out, sizeof out);
    assert_string_equal(out, ".");
    dump_path_directory("/qaudit-%p.json", out, sizeof out);
    assert_string_equal(out, "/");
    dump_path_directory("/no/such/dir-%p/x-%n.json", out, sizeof out);
    assert_string_equal(out, "/no/such/dir-%p");
}

static void test_globs(void **state)
{
    (void)state;
    char plain[256], variants[256];
    dump_path_globs("out/qaudit-%p.json", 55, plain, variants, sizeof plain);
    assert_string_equal(plain, "out/qaudit-55.json");
    assert_string_equal(variants, "out/qaudit-55.*.json");
    dump_path_globs("out.d/dump", -1, plain, variants, sizeof plain);
    assert_string_equal(plain, "out.d/dump");
    assert_string_equal(variants, "out.d/dump.*");
}

/* A directory that does not exist holds no dump; nor does one whose files are no dumps. */
static void test_program_dump_absent(void **state)
{
    (void)state;
    char out[256] = "unchanged";
    assert_false(
        dump_path_program("/nonexistent-qaudit-dir/qaudit-%p.json", 42, NULL, out, sizeof out));
    assert_string_equal(out, "unchanged");
    char dir[] = "/tmp/qaudit-dump-path-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[512], pattern[512];
    snprintf(file, sizeof file, "%s/qaudit-42.json", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("{\"not\": \"a dump\"}\n", f);
    fclose(f);
    snprintf(pattern, sizeof pattern, "%s/qaudit-%%p.json", dir);
    assert_false(dump_path_program(pattern, 42, NULL, out, sizeof out));
    unlink(file);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand_pid_and_sequence),
        cmocka_unit_test(test_expand_stays_inside_the_buffer),
        cmocka_unit_test(test_directory),
        cmocka_unit_test(test_globs),
        cmocka_unit_test(test_program_dump_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
