/* qaudit layout against the compiler: fixtures are compiled here in every DWARF flavour the issue
 * names (DWARF 4 and 5, -gz, -gsplit-dwarf, a separate debug file found by .gnu_debuglink, C++),
 * and every size, alignment and member offset the fixture prints must match the JSON; sizes and
 * hole counts must also match pahole's. Bad input gets exit 2 and one line, never a crash. */
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

static json_t *find_type(json_t *doc, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(doc, "types"), i, t)
    {
        if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0)
            return t;
    }
    fail_msg("type %s not in the layout", name);
    return NULL;
}

static long long field(json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

/* Every "size" and "member" line the fixture prints, checked against the layout. */
static void check_against_compiler(const char *binary, json_t *doc, int at_least)
{
    char command[600];
    snprintf(command, sizeof command, "%s", binary);
    FILE *p = popen(command, "r");
    char line[512];
    int checked = 0;
    while (fgets(line, sizeof line, p)) {
        char name[256], member[128];
        unsigned long long a, b;
        if (sscanf(line, "size|%255[^|]|%llu|%llu", name, &a, &b) == 3) {
            json_t *t = find_type(doc, name);
            assert_int_equal(field(t, "size"), a);
            assert_int_equal(field(t, "align"), b);
            checked++;
        } else if (sscanf(line, "member|%255[^|]|%127[^|]|%llu", name, member, &a) == 3) {
            json_t *t = find_type(doc, name), *m;
            size_t i;
            bool found = false;
            json_array_foreach(json_object_get(t, "members"), i, m)
            {
                if (strcmp(json_string_value(json_object_get(m, "name")), member) == 0) {
                    assert_int_equal(field(m, "offset"), a);
                    found = true;
                }
            }
            if (!found)
                fail_msg("%s has no member %s", name, member);
            checked++;
        }
    }
    pclose(p);
    assert_true(checked >= at_least);
}

static void check_flavour(const char *flags, const char *name)
{
    char binary[256];
    snprintf(binary, sizeof binary, "%s/%s", dir, name);
    assert_int_equal(sh("cd %s && gcc -std=c11 %s -o %s %s/shapes.c", dir, flags, binary, FIXTURES),
                     0);
    json_t *doc = layout_json(binary, "");
    check_against_compiler(binary, doc, 20);
    json_t *bits = find_type(doc, "bits");
    json_t *b = json_array_get(json_object_get(bits, "members"), 1);
    assert_int_equal(field(b, "bit_offset"), 3);
    assert_int_equal(field(b, "bit_size"), 7);
    /* DW_TAG_atomic_type exists from DWARF 5 on: in DWARF 4 gcc emits the plain type. */
    json_t *q = find_type(doc, "qualified");
    const char *atomic = json_string_value(
        json_object_get(json_array_get(json_object_get(q, "members"), 2), "type"));
    assert_string_equal(atomic, strstr(flags, "dwarf-4") ? "long int" : "_Atomic long int");
    json_t *holes = find_type(doc, "holes");
    assert_int_equal(field(holes, "holes"), 2); /* 3 bytes after c, 7 after d */
    assert_int_equal(field(holes, "hole_bytes"), 10);
    assert_int_equal(field(holes, "padding"), 6);
    assert_int_equal(field(bits, "holes"), 0);
    assert_int_equal(field(bits, "bit_holes"), 2); /* 22 bits before c (": 0"), 4 before tail */
    assert_true(json_is_true(json_object_get(find_type(doc, "packed"), "packed")));
    /* Member sizes: every member of outer has its real size, so nothing is left as padding. */
    json_t *outer = find_type(doc, "outer");
    assert_int_equal(field(outer, "padding"), 0);
    json_t *second = json_array_get(json_object_get(outer, "members"), 2);
    assert_int_equal(field(second, "size"), 32);
    assert_string_equal(json_string_value(json_object_get(second, "type")), "struct inner[2]");
    json_decref(doc);
}

static void test_dwarf_flavours(void **state)
{
    (void)state;
    setup_dir("layout");
    check_flavour("-g -gdwarf-5", "dwarf5");
    check_flavour("-g -gdwarf-4", "dwarf4");
    check_flavour("-g -gz", "compressed");
    check_flavour("-g -gsplit-dwarf", "split");
    check_flavour("-g -gdwarf-4 -fdebug-types-section", "types4"); /* .debug_types units */
    check_flavour("-g -gdwarf-5 -fdebug-types-section", "types5"); /* DWARF 5 type units */
    cleanup_dir();
}

/* objcopy --only-keep-debug, strip, --add-gnu-debuglink: found by the link, or given. */
static void test_separate_debug_file(void **state)
{
    (void)state;
    setup_dir("layout");
    assert_int_equal(sh("cd %s && gcc -std=c11 -g -o shapes %s/shapes.c && objcopy "
                        "--only-keep-debug shapes shapes.debug && "
                        "strip -g shapes && objcopy --add-gnu-debuglink=shapes.debug shapes",
                        dir, FIXTURES),
                     0);
    char binary[256], debug[300];
    snprintf(binary, sizeof binary, "%s/shapes", dir);
    snprintf(debug, sizeof debug, "--debug-file %s/shapes.debug", dir);
    json_t *doc = layout_json(binary, "");
    check_against_compiler(binary, doc, 20);
    json_decref(doc);
    doc = layout_json(binary, debug);
    check_against_compiler(binary, doc, 20);
    json_decref(doc);
    cleanup_dir();
}

static void test_cplusplus_names(void **state)
{
    (void)state;
    setup_dir("layout");
    char binary[256];
    snprintf(binary, sizeof binary, "%s/shapes_cpp", dir);
    assert_int_equal(sh("g++ -std=c++17 -g -o %s %s/shapes.cpp", binary, FIXTURES), 0);
    json_t *doc = layout_json(binary, "--type 'ns::*'");
    check_against_compiler(binary, doc, 4);
    json_t *derived = find_type(doc, "ns::Derived");
    json_t *base = json_array_get(json_object_get(derived, "members"), 0);
    assert_true(json_is_true(json_object_get(base, "base")));
    assert_string_equal(json_string_value(json_object_get(base, "type")), "ns::Base");
    json_decref(doc);
    cleanup_dir();
}

/* Sizes and hole counts agree with pahole's --sizes for every struct pahole lists. */
static void test_agrees_with_pahole(void **state)
{
    (void)state;
    setup_dir("layout");
    char binary[256];
    snprintf(binary, sizeof binary, "%s/shapes", dir);
    assert_int_equal(sh("gcc -std=c11 -g -o %s %s/shapes.c", binary, FIXTURES), 0);
    json_t *doc = layout_json(binary, "");
    char command[400];
    snprintf(command, sizeof command, "pahole --sizes %s 2>/dev/null", binary);
    FILE *p = popen(command, "r");
    char name[256];
    long long size, holes;
    int compared = 0;
    while (fscanf(p, "%255s %lld %lld", name, &size, &holes) == 3) {
        if (strcmp(name, "qualified") == 0)
            continue; /* pahole 1.24 cannot read the _Atomic member's type */
        json_t *t = find_type(doc, name);
        assert_int_equal(field(t, "size"), size);
        assert_int_equal(field(t, "holes"), holes);
        compared++;
    }
    pclose(p);
    assert_true(compared >= 6);
    json_decref(doc);
    cleanup_dir();
}

static json_t *member_named(json_t *type, const char *name)
{
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(type, "members"), i, m)
    {
        if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0)
            return m;
    }
    fail_msg("no member %s", name);
    return NULL;
}

/* --expand: members of members at absolute offsets, one level deeper; the type's own holes and
 * padding do not change, and the compiler's offsets still hold. */
static void test_expand(void **state)
{
    (void)state;
    setup_dir("layout");
    char binary[256];
    snprintf(binary, sizeof binary, "%s/shapes", dir);
    assert_int_equal(sh("gcc -std=c11 -g -o %s %s/shapes.c", binary, FIXTURES), 0);
    json_t *doc = layout_json(binary, "--expand");
    check_against_compiler(binary, doc, 20);
    json_t *outer = find_type(doc, "outer");
    json_t *value = member_named(outer, "first.value");
    assert_int_equal(field(value, "offset"), 8);
    assert_int_equal(field(value, "depth"), 1);
    assert_int_equal(field(outer, "holes"), 1);
    assert_int_equal(field(outer, "padding"), 0);
    json_t *anon = find_type(doc, "with_anonymous");
    assert_int_equal(field(member_named(anon, "point.y"), "offset"), 10);
    assert_int_equal(field(member_named(anon, "as_float"), "offset"), 4); /* as C spells it */
    json_decref(doc);
    cleanup_dir();
}

/* The same name defined differently in two units: both definitions reported, both flagged. */
static void test_odr_violation(void **state)
{
    (void)state;
    setup_dir("layout");
    assert_int_equal(sh("cd %s && printf 'struct dup { int a; };\\nstruct dup g_a;\\n' > a.c && "
                        "printf 'struct dup { long a; char b; };\\nstruct dup g_b;\\nint "
                        "main(void) { return 0; }\\n' > b.c && "
                        "gcc -g -o odr a.c b.c",
                        dir),
                     0);
    char binary[256];
    snprintf(binary, sizeof binary, "%s/odr", dir);
    json_t *doc = layout_json(binary, "--type dup");
    json_t *types = json_object_get(doc, "types");
    assert_int_equal(json_array_size(types), 2);
    for (size_t i = 0; i < 2; i++)
        assert_true(json_is_true(json_object_get(json_array_get(types, i), "odr_conflict")));
    assert_int_not_equal(field(json_array_get(types, 0), "size"),
                         field(json_array_get(types, 1), "size"));
    json_decref(doc);
    /* The same definition in several units is printed once. */
    assert_int_equal(
        sh("cd %s && cp a.c c.c && sed -i 's/g_a/g_c/' c.c && "
           "printf 'int main(void) { return 0; }\\n' > m.c && gcc -g -o same a.c c.c m.c",
           dir),
        0);
    snprintf(binary, sizeof binary, "%s/same", dir);
    doc = layout_json(binary, "--type dup");
    assert_int_equal(json_array_size(json_object_get(doc, "types")), 1);
    assert_false(json_is_true(
        json_object_get(json_array_get(json_object_get(doc, "types"), 0), "odr_conflict")));
    json_decref(doc);
    cleanup_dir();
}

static void test_markdown(void **state)
{
    (void)state;
    char command[512];
    snprintf(command, sizeof command, "%s layout --format md --type rx_desc %s", QAUDIT,
             QAUDIT_RINGKV);
    FILE *p = popen(command, "r");
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = '\0';
    assert_int_equal(pclose(p), 0);
    assert_non_null(strstr(text, "### struct rx_desc: 12 B, align 4"));
    assert_non_null(strstr(text, "| 0 | 2 | `uint16_t buffer_id` |"));
    assert_non_null(strstr(text, "| 2 | 2 | *hole* |\n"));
}

static void expect_input_error(const char *path, const char *words)
{
    char command[600];
    snprintf(command, sizeof command, "%s layout %s 2>&1 >/dev/null", QAUDIT, path);
    FILE *p = popen(command, "r");
    char line[600] = {0};
    char *got = fgets(line, sizeof line, p);
    int status = pclose(p);
    assert_non_null(got);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 2);
    if (strstr(line, words) == NULL)
        fail_msg("'%s' does not say '%s'", line, words);
}

static void test_bad_input(void **state)
{
    (void)state;
    setup_dir("layout");
    char path[300];
    snprintf(path, sizeof path, "%s/text", dir);
    sh("echo 'not an elf' > %s", path);
    expect_input_error(path, "not an ELF");
    assert_int_equal(
        sh("gcc -std=c11 -g -o %s/full %s/shapes.c && head -c 3000 %s/full > %s/truncated && "
           "cp %s/full %s/stripped && strip %s/stripped",
           dir, FIXTURES, dir, dir, dir, dir, dir),
        0);
    snprintf(path, sizeof path, "%s/stripped", dir);
    expect_input_error(path, "has no DWARF");
    snprintf(path, sizeof path, "%s/truncated", dir);
    expect_input_error(path, "truncated");
    snprintf(path, sizeof path, "%s/missing", dir);
    expect_input_error(path, "No such file");
    /* Eight bytes of 0xff at offset 40 of .debug_info, over the unit's line table offset and
     * the abbreviation code of the DIE after the unit's: that DIE cannot be read, so exit 2
     * with one line naming corrupt DWARF, nothing on stdout; never a crash, a hang or a layout. */
    assert_int_equal(sh("cd %s && cp full flipped && off=$(readelf -SW full | awk "
                        "'$2==\".debug_info\"{print $5}') && "
                        "printf '\\377\\377\\377\\377\\377\\377\\377\\377' | dd of=flipped bs=1 "
                        "seek=$((0x$off + 40)) conv=notrunc 2>/dev/null",
                        dir),
                     0);
    assert_int_equal(sh("timeout 20 %s layout %s/flipped >%s/out 2>%s/err", QAUDIT, dir, dir, dir),
                     2);
    assert_int_equal(sh("test ! -s %s/out && test $(wc -l <%s/err) -eq 1 && grep -q 'corrupt "
                        "DWARF at DIE' %s/err",
                        dir, dir, dir),
                     0);
    cleanup_dir();
}

static json_t *function_named(json_t *doc, const char *name)
{
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(doc, "functions"), i, f)
    {
        if (strcmp(json_string_value(json_object_get(f, "name")), name) == 0)
            return f;
    }
    fail_msg("function %s not listed", name);
    return NULL;
}

/* --functions: code sizes equal nm's symbol sizes; the inline count equals the call sites. */
static void test_functions(void **state)
{
    (void)state;
    setup_dir("layout");
    char binary[256];
    snprintf(binary, sizeof binary, "%s/functions", dir);
    /* -O0: always_inline still inlines, and no call site is folded away, so DWARF keeps all four
     * (at -O2 GCC merges some and records fewer). */
    assert_int_equal(sh("gcc -O0 -g -o %s %s/functions.c", binary, FIXTURES), 0);
    char command[1024];
    snprintf(command, sizeof command,
             "%s layout --format json --functions 'use_*' --functions twice %s", QAUDIT, binary);
    FILE *p = popen(command, "r");
    json_error_t error;
    json_t *doc = json_loadf(p, 0, &error);
    assert_int_equal(pclose(p), 0);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "format")), "qaudit-functions/1");
    json_t *twice = function_named(doc, "twice");
    assert_int_equal(field(twice, "inlined"), 4);
    assert_int_equal(field(twice, "code_size"), 0);
    const char *names[] = {"use_a", "use_b", "use_c"};
    for (int i = 0; i < 3; i++) {
        snprintf(command, sizeof command, "nm -S %s | awk '$4 == \"%s\" { print $2 }'", binary,
                 names[i]);
        p = popen(command, "r");
        unsigned long long size = 0;
        assert_int_equal(fscanf(p, "%llx", &size), 1);
        pclose(p);
        json_t *f = function_named(doc, names[i]);
        assert_int_equal(field(f, "code_size"), size);
        assert_int_equal(field(f, "symbols"), 1);
        assert_int_equal(field(f, "inlined"), 0);
    }
    json_decref(doc);
    assert_int_equal(
        sh("%s layout --functions no_such_function %s >/dev/null 2>&1", QAUDIT, binary), 2);
    cleanup_dir();
}

/* Runs qaudit layout --stats and keeps its stderr line in line. */
static void layout_stats(const char *binary, const char *types, char *line, size_t size)
{
    char command[1024];
    snprintf(command, sizeof command, "%s layout --stats %s %s 2>&1 >/dev/null", QAUDIT, types,
             binary);
    FILE *p = popen(command, "r");
    assert_non_null(fgets(line, (int)size, p));
    assert_int_equal(pclose(p), 0);
}

/* With a .gdb_index (gdb-add-index), an exact --type reads only the unit the index names, and
 * shows the same layout as a full read; a glob still reads every unit. */
static void test_index_lookup(void **state)
{
    (void)state;
    setup_dir("layout");
    char binary[256], line[256];
    snprintf(binary, sizeof binary, "%s/indexed", dir);
    assert_int_equal(sh("cd %s && printf 'struct elsewhere { long a; char b; } e;\\n' > other.c && "
                        "gcc -std=c11 -g -o %s %s/shapes.c other.c",
                        dir, binary, FIXTURES),
                     0);
    json_t *full_doc = layout_json(binary, "--type holes");
    json_t *full = find_type(full_doc, "holes");
    layout_stats(binary, "--type holes", line, sizeof line);
    assert_null(strstr(line, ".gdb_index"));
    assert_non_null(strstr(line, "read 2 of 2 units"));
    assert_int_equal(sh("gdb-add-index %s >/dev/null 2>&1", binary), 0);
    layout_stats(binary, "--type holes", line, sizeof line);
    assert_non_null(strstr(line, "read 1 of 2 units (chosen by .gdb_index)"));
    json_t *indexed_doc = layout_json(binary, "--type holes");
    assert_true(json_equal(full, find_type(indexed_doc, "holes")));
    json_decref(full_doc);
    json_decref(indexed_doc);
    layout_stats(binary, "--type elsewhere", line, sizeof line);
    assert_non_null(strstr(line, "read 1 of 2 units (chosen by .gdb_index)"));
    layout_stats(binary, "--type 'hol*'", line, sizeof line);
    assert_non_null(strstr(line, "read 2 of 2 units"));
    cleanup_dir();
}

static void test_unknown_type_is_an_error(void **state)
{
    (void)state;
    int status = sh("%s layout --type no_such_struct %s >/dev/null 2>&1", QAUDIT, QAUDIT);
    assert_int_equal(status, 2);
    assert_int_equal(sh("%s layout --format yaml %s >/dev/null 2>&1", QAUDIT, QAUDIT), 2);
    assert_int_equal(sh("%s layout >/dev/null 2>&1", QAUDIT), 2);
    assert_int_equal(sh("%s layout --help >/dev/null", QAUDIT), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dwarf_flavours),  cmocka_unit_test(test_separate_debug_file),
        cmocka_unit_test(test_cplusplus_names), cmocka_unit_test(test_agrees_with_pahole),
        cmocka_unit_test(test_bad_input),       cmocka_unit_test(test_unknown_type_is_an_error),
        cmocka_unit_test(test_odr_violation),   cmocka_unit_test(test_markdown),
        cmocka_unit_test(test_expand),          cmocka_unit_test(test_functions),
        cmocka_unit_test(test_index_lookup),
    };
    return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}
