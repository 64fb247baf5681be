/* The subcommands' option parser (cli/option_parse.c) and the nearest name a mistake is given
 * (cli/options.c): values after = and after a space, a missing value at the end, an unknown
 * option and a near one, `--`, repeated options, operands among options, and each one-line
 * message byte for byte, as `qaudit CMD` prints it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "option_parse.h"

/* What one parse did: each option's destination, and what it wrote on stderr and stdout. */
struct parsed {
    const char *out, *poison;
    bool quiet, symbols, poison_seen;
    long count;
    char *values[16];
    struct option_list list;
    int operand, status;
    char err[512], std[512];
};

static bool take_poison(void *to, char *value)
{
    struct parsed *p = to;
    p->poison_seen = true;
    p->poison = value;
    return true;
}

static bool refuse_odd(void *to, char *value)
{
    (void)to;
    if (strcmp(value, "odd") == 0) {
        fprintf(stderr, "qaudit t: --mode refuses '%s'\n", value);
        return false;
    }
    return true;
}

/* The contents of the file behind fd (from its start) into buffer. */
static void read_back(FILE *f, char *buffer, size_t size)
{
    rewind(f);
    size_t n = fread(buffer, 1, size - 1, f);
    buffer[n] = '\0';
    fclose(f);
}

/* Parses the words (NULL-ended, the command's name first) with the test's table; stop: the
 * table's stop_at_operand. */
static void parse(struct parsed *p, bool stop, const char *first, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *w = first; w != NULL && argc < 31; w = va_arg(ap, const char *))
        argv[argc++] = (char *)w;
    va_end(ap);
    argv[argc] = NULL;
    memset(p, 0, sizeof *p);
    p->symbols = true;
    p->list.items = p->values;
    const struct option_spec specs[] = {
        {"out", 0, OPTION_VALUE, OPTION_STRING, &p->out, 0, NULL, "a path"},
        {"quiet", 'q', OPTION_NO_VALUE, OPTION_SET, &p->quiet, 0, NULL, "a flag"},
        {"no-symbols", 0, OPTION_NO_VALUE, OPTION_CLEAR, &p->symbols, 0, NULL, "a flag off"},
        {"type", 'C', OPTION_VALUE, OPTION_LIST, &p->list, 0, NULL, "repeatable"},
        {"count", 0, OPTION_VALUE, OPTION_NUMBER, &p->count, 1, NULL, "a number"},
        {"poison", 0, OPTION_MAYBE_VALUE, OPTION_CALL, p, 0, take_poison, "maybe a value"},
        {"mode", 0, OPTION_VALUE, OPTION_CALL, NULL, 0, refuse_odd, "checked"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {NULL, 'o', OPTION_VALUE, OPTION_STRING, &p->out, 0, NULL, "short only"},
        {0}};
    const struct option_table table = {"t", "usage: qaudit t [--out PATH]\n", stop, specs};
    FILE *err = tmpfile(), *std = tmpfile();
    assert_non_null(err);
    assert_non_null(std);
    fflush(stderr);
    fflush(stdout);
    int saved_err = dup(2), saved_out = dup(1);
    dup2(fileno(err), 2);
    dup2(fileno(std), 1);
    p->status = option_parse(&table, argc, argv, &p->operand);
    fflush(stderr);
    fflush(stdout);
    dup2(saved_err, 2);
    dup2(saved_out, 1);
    close(saved_err);
    close(saved_out);
    read_back(err, p->err, sizeof p->err);
    read_back(std, p->std, sizeof p->std);
}

static void test_value_after_equals_or_space(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, false, "t", "--out=a.json", "BIN", NULL);
    assert_int_equal(p.status, OPTIONS_PARSED);
    assert_string_equal(p.out, "a.json");
    assert_int_equal(p.operand, 2);
    parse(&p, false, "t", "--out", "b.json", "BIN", NULL);
    assert_int_equal(p.status, OPTIONS_PARSED);
    assert_string_equal(p.out, "b.json");
    assert_int_equal(p.operand, 3);
    parse(&p, false, "t", "-o", "c.json", "--count=7", "-C", "conn", NULL);
    assert_int_equal(p.status, OPTIONS_PARSED);
    assert_string_equal(p.out, "c.json");
    assert_int_equal(p.count, 7);
    assert_int_equal(p.list.count, 1);
    assert_string_equal(p.values[0], "conn");
    assert_string_equal(p.err, "");
}

/* A parse that stopped inside a cluster of short options ("-Zq": -Z unknown) leaves getopt's
 * place in that cluster; the next parse must not read the rest of it ("q") as its own. */
static void test_next_parse_after_a_cut_cluster(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, false, "t", "-Zq", "BIN", NULL);
    assert_int_equal(p.status, 2);
    parse(&p, false, "t", "BIN", NULL);
    assert_int_equal(p.status, OPTIONS_PARSED);
    assert_false(p.quiet);
    assert_int_equal(p.operand, 1);
}

static void test_missing_value_at_the_end(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, false, "t", "BIN", "--out", NULL);
    assert_int_equal(p.status, 2);
    assert_string_equal(p.err, "qaudit t: --out wants a value (qaudit t --help)\n");
    parse(&p, false, "t", "BIN", "-o", NULL);
    assert_int_equal(p.status, 2);
    assert_string_equal(p.err, "qaudit t: -o wants a value (qaudit t --help)\n");
}

static void test_unknown_option(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, false, "t", "--bogus", "BIN", NULL);
    assert_int_equal(p.status, 2);
    assert_string_equal(p.err, "qaudit t: unknown option --bogus (qaudit t --help lists them)\n");
    parse(&p, false, "t", "--qiuet=1", "BIN", NULL);
    assert_int_equal(p.status, 2);
    assert_string_equal(p.err, "qaudit t: unknown option --qiuet (did you mean --quiet?)\n");
    parse(&p, false, "t", "-Z", "BIN", NULL);
    assert_int_equal(p.status, 2);
    assert_string_equal(p.err, "qaudit t: unknown option -Z (qaudit t --help lists them)\n");
    parse(&p, false, "t", "--quiet=yes", NULL);
    assert_int_equal(p.status, 2);
    assert_string_equal(p.err, "qaudit t: --quiet takes no value\n");
}

static void test_double_dash_ends_options(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, false, "t", "--quiet", "--", "--out", "x", NULL);
    assert_int_equal(p.status, OPTIONS_PARSED);
    assert_true(p.quiet);
    assert_null(p.out);
    assert_int_equal(p.operand, 3);
}

static void test_repeated_options(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, false, "t", "--out", "first", "--type", "a", "--out=last", "--type=b", "-C", "c",
          NULL);
    assert_int_equal(p.status, OPTIONS_PARSED);
    assert_string_equal(p.out, "last");
    assert_int_equal(p.list.count, 3);
    assert_string_equal(p.values[0], "a");
    assert_string_equal(p.values[1], "b");
    assert_string_equal(p.values[2], "c");
}

/* getopt's order: operands among options are moved behind them, unless the table stops at the
 * first operand (qaudit run: COMMAND's own options stay COMMAND's). */
static void test_operands_among_options(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, false, "t", "BIN", "--quiet", "NAME", "--no-symbols", NULL);
    assert_int_equal(p.status, OPTIONS_PARSED);
    assert_true(p.quiet);
    assert_false(p.symbols);
    assert_int_equal(p.operand, 3);
    parse(&p, true, "t", "--quiet", "prog", "--out", "x", NULL);
    assert_int_equal(p.status, OPTIONS_PARSED);
    assert_null(p.out);
    assert_int_equal(p.operand, 2);
}

static void test_values_checked(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, false, "t", "--count", "0", NULL);
    assert_int_equal(p.status, 2);
    assert_string_equal(p.err, "qaudit t: --count wants a number from 1 to 1048576, got '0'\n");
    parse(&p, false, "t", "--count=12x", NULL);
    assert_int_equal(p.status, 2);
    parse(&p, false, "t", "--mode", "odd", NULL);
    assert_int_equal(p.status, 2);
    assert_string_equal(p.err, "qaudit t: --mode refuses 'odd'\n");
    parse(&p, false, "t", "--mode", "even", NULL);
    assert_int_equal(p.status, OPTIONS_PARSED);
    parse(&p, false, "t", "--poison", "x", NULL);
    assert_int_equal(p.status, OPTIONS_PARSED);
    assert_true(p.poison_seen);
    assert_null(p.poison);
    assert_int_equal(p.operand, 2);
    parse(&p, false, "t", "--poison=queue", NULL);
    assert_string_equal(p.poison, "queue");
}

static void test_help(void **state)
{
    (void)state;
    struct parsed p;
    parse(&p, false, "t", "BIN", "--help", "--bogus", NULL);
    assert_int_equal(p.status, 0);
    assert_string_equal(p.std, "usage: qaudit t [--out PATH]\n");
    assert_string_equal(p.err, "");
    /* an abbreviation, as getopt_long takes it */
    parse(&p, false, "t", "--he", NULL);
    assert_int_equal(p.status, 0);
}

static void test_nearest_name(void **state)
{
    (void)state;
    static const char *const names[] = {"format", "debug-file", "type", "functions", "first"};
    assert_string_equal(nearest_name("fromat", names, 5), "format");
    assert_string_equal(nearest_name("form", names, 5), "format"); /* a prefix */
    assert_string_equal(nearest_name("debugfile=x", names, 5), "debug-file");
    assert_string_equal(nearest_name("tpye", names, 5), "type");
    assert_null(nearest_name("zzzzzz", names, 5));
    assert_null(nearest_name("", names, 5));
    assert_string_equal(nearest_name("fist", names, 5), "first");
    /* the first of the nearest: both are prefixed by "form" (layout's order is kept for this) */
    static const char *const twins[] = {"format", "formats"};
    assert_string_equal(nearest_name("form", twins, 2), "format");
    static const char *const commands[] = {"run", "snapshot", "report", "layout", "--version"};
    assert_string_equal(nearest_name("lay", commands, 5), "layout");
    assert_string_equal(nearest_name("snapshto", commands, 5), "snapshot");
    assert_null(nearest_name("bogus", commands, 5));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_after_equals_or_space),
        cmocka_unit_test(test_next_parse_after_a_cut_cluster),
        cmocka_unit_test(test_missing_value_at_the_end),
        cmocka_unit_test(test_unknown_option),
        cmocka_unit_test(test_double_dash_ends_options),
        cmocka_unit_test(test_repeated_options),
        cmocka_unit_test(test_operands_among_options),
        cmocka_unit_test(test_values_checked),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_nearest_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
