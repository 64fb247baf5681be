/* qaudit layout --type on a file with a .debug_names index and with --first (issue 14, "fast on
 * every kind of input"): the index chooses the units that define the name, and sees every one of
 * them, so an ODR conflict is still reported; --first stops at the first unit that defines every
 * name and says so; a damaged index is never trusted past its bounds. Built with clang
 * -gpubnames (one name index per object, as GNU ld leaves them) and gdb-add-index -dwarf-5. */
#include <jansson.h>
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

#include "probe_fixture.h"

/* The first line qaudit writes on stderr for layout --stats ARGS BINARY (stdout dropped). */
static void stats(const char *binary, const char *args, char *line, size_t size)
{
    char command[1024];
    snprintf(command, sizeof command, "%s layout --stats %s %s 2>&1 >/dev/null", QAUDIT, args,
             binary);
    FILE *p = popen(command, "r");
    line[0] = '\0';
    if (fgets(line, (int)size, p) == NULL)
        line[0] = '\0';
    pclose(p);
}

static void expect_stats(const char *binary, const char *args, const char *words)
{
    char line[512];
    stats(binary, args, line, sizeof line);
    if (strstr(line, words) == NULL)
        fail_msg("layout --stats %s %s: '%s' does not say '%s'", args, binary, line, words);
}

static json_t *types(json_t *doc)
{
    return json_object_get(doc, "types");
}

/* A fresh scratch dir with `indexed`, of three units: shapes.c, a C++ one with a nested name,
 * and one defining `dup` differently from the last; each object with its own name index (clang
 * -gpubnames). Its path in binary. */
static void build_indexed(char binary[256])
{
    setup_dir("lookup");
    assert_int_equal(
        sh("cd %s && printf 'struct dup { int a; };\\nstruct dup g_a;\\n' > a.c && "
           "printf 'struct dup { long a; char b; };\\nstruct dup g_b;\\n' > b.c && "
           "printf 'namespace ns { struct Inner { int q; }; } ns::Inner gi;\\n' > n.cpp && "
           "clang -std=c11 -g -gdwarf-5 -gpubnames -c %s/shapes.c a.c b.c && "
           "clang++ -g -gdwarf-5 -gpubnames -c n.cpp && clang++ -o indexed shapes.o a.o b.o n.o",
           dir, FIXTURES),
        0);
    snprintf(binary, 256, "%s/indexed", dir);
}

/* The index chooses the one unit that defines a name, and the layout is the full read's. */
static void test_debug_names_chooses_units(void **state)
{
    (void)state;
    char binary[256];
    build_indexed(binary);
    expect_stats(binary, "--type holes", "read 1 of 4 units (chosen by .debug_names)");
    expect_stats(binary, "--type ns::Inner", "read 1 of 4 units (chosen by .debug_names)");
    expect_stats(binary, "--type Inner", "read 1 of 4 units (chosen by .debug_names)");
    /* A glob, or a name the index lacks: every unit. */
    expect_stats(binary, "--type 'hol*'", "read 4 of 4 units");
    expect_stats(binary, "--type nosuch", "read 4 of 4 units");
    json_t *indexed = layout_json(binary, "--type holes");
    assert_int_equal(sh("objcopy -R .debug_names %s %s/plain", binary, dir), 0);
    char plain[256];
    snprintf(plain, sizeof plain, "%s/plain", dir);
    expect_stats(plain, "--type holes", "read 4 of 4 units");
    json_t *full = layout_json(plain, "--type holes");
    assert_true(json_equal(json_array_get(types(indexed), 0), json_array_get(types(full), 0)));
    json_decref(indexed);
    json_decref(full);
    cleanup_dir();
}

/* .debug_names lists every unit defining a name: an ODR conflict is still found through it. */
static void test_debug_names_sees_odr_conflicts(void **state)
{
    (void)state;
    char binary[256];
    build_indexed(binary);
    expect_stats(binary, "--type dup", "read 2 of 4 units (chosen by .debug_names)");
    json_t *doc = layout_json(binary, "--type dup");
    assert_int_equal(json_array_size(types(doc)), 2);
    for (size_t i = 0; i < 2; i++)
        assert_true(json_is_true(json_object_get(json_array_get(types(doc), i), "odr_conflict")));
    json_decref(doc);
    /* gdb's index of the same program (one name index for the file). */
    assert_int_equal(sh("cd %s && objcopy -R .debug_names indexed gdb && "
                        "gdb-add-index -dwarf-5 gdb >/dev/null 2>&1",
                        dir),
                     0);
    snprintf(binary, sizeof binary, "%s/gdb", dir);
    expect_stats(binary, "--type holes", "read 1 of 4 units (chosen by .debug_names)");
    cleanup_dir();
}

/* --first: the first unit that defines every name, said so; the later conflicting definition
 * goes unseen, as documented. */
static void test_first(void **state)
{
    (void)state;
    char binary[256];
    build_indexed(binary);
    assert_int_equal(sh("cd %s && objcopy -R .debug_names indexed plain", dir), 0);
    snprintf(binary, sizeof binary, "%s/plain", dir);
    expect_stats(binary, "--first --type dup",
                 "read 2 units (--first: up to the first definitions)");
    json_t *doc = layout_json(binary, "--first --type dup");
    assert_int_equal(json_array_size(types(doc)), 1);
    assert_false(json_is_true(json_object_get(json_array_get(types(doc), 0), "odr_conflict")));
    json_decref(doc);
    expect_stats(binary, "--first --type holes", "read 1 unit (--first");
    expect_stats(binary, "--first --type holes --type Inner", "read 4 units (--first");
    /* Without --first every unit is read and the conflict is reported. */
    doc = layout_json(binary, "--type dup");
    assert_int_equal(json_array_size(types(doc)), 2);
    json_decref(doc);
    cleanup_dir();
}

/* A damaged index: read within its bounds, never trusted for a wrong answer. Every other byte
 * of the section, one at a time, inverted: the read either fails (exit 2) or gives the layout of
 * the undamaged file, never crashes or hangs. */
static void test_damaged_index(void **state)
{
    (void)state;
    char binary[256], bad[256], out[256];
    build_indexed(binary);
    snprintf(bad, sizeof bad, "%s/bad", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    json_t *good = layout_json(binary, "--type holes");
    long offset, length;
    section(binary, ".debug_names", &offset, &length);
    size_t size;
    char *bytes = slurp(binary, &size);
    for (long at = offset; at < offset + length; at += 2) {
        bytes[at] ^= (char)0xff;
        spill(bad, bytes, size);
        bytes[at] ^= (char)0xff;
        int status = sh("timeout 20 %s layout --format json --type holes %s > %s 2>/dev/null",
                        QAUDIT, bad, out);
        if (status == 2)
            continue;
        if (status != 0)
            fail_msg("byte 0x%lx of .debug_names inverted: exit %d", at - offset, status);
        json_t *doc = json_load_file(out, 0, NULL);
        assert_non_null(doc);
        if (!json_equal(json_array_get(types(doc), 0), json_array_get(types(good), 0)))
            fail_msg("byte 0x%lx of .debug_names inverted: another layout", at - offset);
        json_decref(doc);
    }
    free(bytes);
    json_decref(good);
    cleanup_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_debug_names_chooses_units),
        cmocka_unit_test(test_debug_names_sees_odr_conflicts),
        cmocka_unit_test(test_first),
        cmocka_unit_test(test_damaged_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
