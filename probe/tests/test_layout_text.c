/* qaudit layout's text as a pahole user reads it: C declarators in pahole's columns (char e[3];,
 * function pointers with their signatures, pointers to arrays), base lists with access and
 * virtual, unnamed struct and union members inline, the same declarators in Markdown and JSON,
 * --type names without namespaces or with other spacing; and, on glibc's own headers (and
 * glibc's debug file when libc6-dbg is installed), every declaration pahole prints. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "probe_fixture.h"

static char *output; /* what the last run() printed on stdout (and stderr when asked) */

/* Runs a command, keeps all of its stdout in output, returns its exit status. */
static int run(const char *fmt, ...)
{
    char command[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(command, sizeof command, fmt, ap);
    va_end(ap);
    FILE *p = popen(command, "r");
    size_t size = 0, cap = 1 << 16;
    free(output);
    output = malloc(cap);
    size_t n;
    while ((n = fread(output + size, 1, cap - size - 1, p)) > 0) {
        size += n;
        if (cap - size < 4096)
            output = realloc(output, cap *= 2);
    }
    output[size] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void expect(const char *text)
{
    if (strstr(output, text) == NULL)
        fail_msg("missing \"%s\" in:\n%s", text, output);
}

static void expect_not(const char *text)
{
    if (strstr(output, text) != NULL)
        fail_msg("unexpected \"%s\" in:\n%s", text, output);
}

static int setup(void **state)
{
    (void)state;
    setup_dir("text");
    return sh("cd %s && gcc -std=c11 -g -o decls %s/declarators.c && g++ -g -o decls_cpp "
              "%s/declarators.cpp",
              dir, FIXTURES, FIXTURES);
}

static int teardown(void **state)
{
    (void)state;
    cleanup_dir();
    free(output);
    output = NULL;
    return 0;
}

/* Exact lines, tabs and columns included: the type at one tab, the name at column 35, the
 * offset comment at 57, as pahole prints them. */
static void test_c_declarators(void **state)
{
    (void)state;
    assert_int_equal(run("%s layout --type decls %s/decls", QAUDIT, dir), 0);
    expect("struct decls {\n");
    expect("\tchar                       e[3];                 /*     0     3 */\n");
    expect("\tvoid                       (*cb)(int, void *);   /*     8     8 */\n");
    expect("\tconst char                 (*strings)[32];       /*    16     8 */\n");
    expect("\tint                        (*printer)(const char *, ...); /*    24     8 */\n");
    expect("\tvoid                       (*done)(void);        /*    32     8 */\n");
    expect("\tchar * const *             argv;                 /*    40     8 */\n");
    expect("\tint                        grid[2][3];           /*    48    24 */");
    expect("\tvoid *                     (*(*factory)(int))(long int); /*    72     8 */\n");
    expect("\tunsigned int               flag:1;               /*    80: 0  4 */\n");
    /* Unnamed members inline, as pahole prints them; an array of them shows its first element. */
    expect("\tunion {\n"
           "\t\tint                as_int;               /*    84     4 */\n"
           "\t\tfloat              as_float;             /*    84     4 */\n"
           "\t};                                               /*    84     4 */\n");
    expect("\tstruct {\n"
           "\t\tshort int          x;                    /*    88     2 */\n"
           "\t\tshort int          y;                    /*    90     2 */\n"
           "\t} point;                                         /*    88     4 */\n");
    expect("\t\tlong int           value;                /*   104     8 */\n"
           "\t} pairs[2];                                      /*    96    32 */\n");
    expect_not("{...}");
    expect("\t/* size: 128, align: 8, cachelines: 2, members: 12 */\n");
}

/* The JSON member named name, or NULL. */
static json_t *json_member(json_t *doc, const char *name)
{
    json_t *members = json_object_get(json_array_get(json_object_get(doc, "types"), 0), "members");
    size_t i;
    json_t *m;
    json_array_foreach(members, i, m)
    {
        if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0)
            return m;
    }
    return NULL;
}

static void expect_json_type(json_t *doc, const char *name, const char *type)
{
    json_t *m = json_member(doc, name);
    if (m == NULL)
        fail_msg("no member %s in the JSON", name);
    assert_string_equal(json_string_value(json_object_get(m, "type")), type);
}

/* JSON keeps "type" (now an abstract declarator) and lists the members of unnamed members only
 * with --expand; Markdown shows the declarations of the text. */
static void test_json_and_markdown(void **state)
{
    (void)state;
    assert_int_equal(run("%s layout --format json --type decls %s/decls", QAUDIT, dir), 0);
    json_t *doc = json_loads(output, 0, NULL);
    assert_non_null(doc);
    expect_json_type(doc, "e", "char[3]");
    expect_json_type(doc, "cb", "void (*)(int, void *)");
    expect_json_type(doc, "strings", "const char (*)[32]");
    expect_json_type(doc, "printer", "int (*)(const char *, ...)");
    expect_json_type(doc, "factory", "void *(*(*)(int))(long int)");
    expect_json_type(doc, "point", "struct {...}");
    assert_null(json_member(doc, "as_int"));
    assert_null(json_member(doc, "point.x"));
    json_decref(doc);
    assert_int_equal(run("%s layout --format json --expand --type decls %s/decls", QAUDIT, dir), 0);
    doc = json_loads(output, 0, NULL);
    assert_non_null(doc);
    assert_int_equal(json_integer_value(json_object_get(json_member(doc, "as_int"), "offset")), 84);
    assert_int_equal(json_integer_value(json_object_get(json_member(doc, "point.y"), "offset")),
                     90);
    json_decref(doc);
    assert_int_equal(run("%s layout --format md --type decls %s/decls", QAUDIT, dir), 0);
    expect("| 8 | 8 | `void (*cb)(int, void *)` |\n");
    expect("| 16 | 8 | `const char (*strings)[32]` |\n");
    expect("| 0 | 3 | `char e[3]` |\n");
    expect("| 84 | 4 | `union {` |\n| 84 | 4 | &nbsp;&nbsp;`int as_int` |\n");
    expect("| | | `} point;` |\n");
}

/* Base lists with access and virtual; virtual bases where the object has them; pointers to
 * members. */
static void test_cplusplus_declarations(void **state)
{
    (void)state;
    assert_int_equal(run("%s layout %s/decls_cpp", QAUDIT, dir), 0);
    expect("struct VL : public virtual VBase {\n");
    expect("class Both : private Priv, protected virtual VBase {\n");
    expect("\t/* virtual VBase              <ancestor>; */     /*    16     8 */\n");
    expect("\tvoid                       (lc::S::*method)();   /*     0    16 */\n");
    expect("\tint lc::S::*               member;               /*    16     8 */\n");
    assert_int_equal(run("%s layout --format md --type Both %s/decls_cpp", QAUDIT, dir), 0);
    expect("### class Both : private Priv, protected virtual VBase: 32 B");
}

/* --type with or without namespaces, any spacing in template arguments, globs; every match. */
static void test_type_names(void **state)
{
    (void)state;
    const char *names[] = {"'Pair2<lc::S, 3>'", "'lc::Pair2<lc::S,3>'", "'Pair2< lc::S ,3 >'",
                           "'lc::Pair2<lc::S, 3>'"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(run("%s layout --type %s %s/decls_cpp", QAUDIT, names[i], dir), 0);
        expect("struct lc::Pair2<lc::S, 3> {\n");
        expect_not("struct lc::Pair2<lc::S, 1> {");
    }
    assert_int_equal(run("%s layout --type 'Pair2<lc::S,*>' %s/decls_cpp", QAUDIT, dir), 0);
    expect("struct lc::Pair2<lc::S, 3> {\n");
    expect("struct lc::Pair2<lc::S, 1> {\n");
    assert_int_equal(run("%s layout --type S %s/decls_cpp", QAUDIT, dir), 0);
    expect("struct lc::S {\n");
    expect_not("Pair2"); /* a name matches whole components, not inside template arguments */
    assert_int_equal(run("%s layout --type 'air2<lc::S, 3>' %s/decls_cpp 2>&1", QAUDIT, dir), 2);
    expect("no struct, class or union matches 'air2<lc::S, 3>'");
}

/* Declarations normalised as pahole 1.24 spells them ("const char  *", "* *") for comparing. A
 * qualified array is beyond pahole ("const const char", the bounds sometimes lost): such lines
 * come out empty. */
static void normalise(const char *in, char *out, size_t size)
{
    size_t n = 0;
    for (; *in && n + 1 < size; in++) {
        if ((*in == ' ' || *in == '\t') && (n == 0 || out[n - 1] == ' '))
            continue;
        out[n++] = *in == '\t' ? ' ' : *in;
        if (n >= 3 && strncmp(out + n - 3, "* *", 3) == 0) /* "* *" -> "**" */
            out[--n - 1] = '*';
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
    if (strstr(out, "const const ") || strstr(out, "volatile volatile "))
        out[0] = '\0';
}

/* The declaration of a member line ("char e[3];"), or false for other lines. */
static bool declaration_of(const char *line, char *out, size_t size)
{
    const char *comment = strstr(line, "; /*");
    const char *spaced = strstr(line, ";  ");
    if (spaced && (!comment || spaced < comment))
        comment = spaced;
    while (*line == '\t')
        line++;
    if (comment == NULL || line[0] == '/' || line[0] == '}' || comment < line)
        return false;
    char text[1024];
    snprintf(text, sizeof text, "%.*s", (int)(comment - line), line);
    normalise(text, out, size);
    return true;
}

/* Blanks the member lines of pahole's unnamed blocks that close as an empty array ("} data[0];",
 * "} x[];"): qaudit does not show the members of an array of no element. */
static void drop_empty_array_blocks(char *text)
{
    char *opened[32];
    int depth = 0;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        const char *start = line + strspn(line, "\t");
        if (n > 2 && line[n - 1] == '{' && depth < 32)
            opened[depth++] = end ? end + 1 : line + n;
        else if (*start == '}' && depth > 0) {
            char *from = opened[--depth];
            if (memmem(start, n - (size_t)(start - line), "[0];", 4) ||
                memmem(start, n - (size_t)(start - line), "[];", 3))
                for (char *p = from; p < line; p++)
                    if (*p != '\n')
                        *p = ' ';
        }
        line = end ? end + 1 : line + n;
    }
}

/* Every declaration pahole prints for binary, but those it cannot spell (its "()(" for a
 * function returning a function pointer, qualified arrays, "<ERROR"), attributes qaudit leaves
 * out, and "[]" for zero-length arrays, which qaudit spells [0], is among qaudit's. Returns how
 * many were compared. */
static int compare_with_pahole(const char *binary)
{
    char path[300];
    snprintf(path, sizeof path, "%s/qaudit.txt", dir);
    assert_int_equal(sh("%s layout %s > %s", QAUDIT, binary, path), 0);
    assert_int_equal(run("pahole %s 2>/dev/null", binary), 0);
    char *pahole = output;
    output = NULL;
    drop_empty_array_blocks(pahole);
    assert_int_equal(run("cat %s", path), 0);
    /* qaudit's declarations, one per line, for strstr. */
    size_t cap = strlen(output) + 2, used = 1;
    char *ours = calloc(cap, 1), decl[1024];
    ours[0] = '\n';
    for (char *line = strtok(output, "\n"); line; line = strtok(NULL, "\n"))
        if (declaration_of(line, decl, sizeof decl) && used + strlen(decl) + 2 < cap)
            used += (size_t)sprintf(ours + used, "%s\n", decl);
    int compared = 0;
    char *save = NULL, wanted[1100];
    for (char *line = strtok_r(pahole, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!declaration_of(line, decl, sizeof decl) || decl[0] == '\0' || strstr(decl, "()(") ||
            strstr(decl, "__attribute__") || strstr(decl, "[]") || strstr(decl, "<ERROR"))
            continue;
        snprintf(wanted, sizeof wanted, "\n%s\n", decl);
        if (strstr(ours, wanted) == NULL)
            fail_msg("pahole prints \"%s\", qaudit does not", decl);
        compared++;
    }
    free(ours);
    free(pahole);
    print_message("%s: %d declarations as pahole prints them\n", binary, compared);
    return compared;
}

/* glibc's headers (types nobody here wrote: glob_t's and struct obstack's function pointers,
 * struct sigaction's unnamed union, FILE), compiled here; the line columns too. */
static void test_agrees_with_pahole_on_glibc_headers(void **state)
{
    (void)state;
    assert_int_equal(
        sh("cd %s && printf '#define _GNU_SOURCE\\n#include <aio.h>\\n#include <glob.h>\\n"
           "#include <obstack.h>\\n#include <signal.h>\\n#include <stdio.h>\\n#include <fts.h>\\n"
           "#include <netdb.h>\\n#include <regex.h>\\n#include <sys/socket.h>\\n"
           "glob_t a; struct sigaction b; struct obstack c; struct sigevent d; FILE e;\\n"
           "struct aiocb f; FTSENT g; struct addrinfo h; regex_t i; struct msghdr j;\\n"
           "cookie_io_functions_t k;\\nint main(void) { return 0; }\\n' > headers.c && "
           "gcc -g -o headers headers.c",
           dir),
        0);
    char binary[200];
    snprintf(binary, sizeof binary, "%s/headers", dir);
    assert_true(compare_with_pahole(binary) >= 60);
    assert_int_equal(run("%s layout --type sigaction %s", QAUDIT, binary), 0);
    expect("\tunion {\n\t\t__sighandler_t     sa_handler;           /*     0     8 */\n"
           "\t\tvoid               (*sa_sigaction)(int, siginfo_t *, void *); /*     0     8 */\n"
           "\t} __sigaction_handler;                           /*     0     8 */\n");
    assert_int_equal(run("%s layout --type obstack %s", QAUDIT, binary), 0);
    expect(
        "\tvoid                       (*freefun)(void *, struct _obstack_chunk *); /*    64     8 "
        "*/\n");
}

/* The C library's own debug file (libc6-dbg, which scripts/deps.sh installs; without it the test
 * is reported skipped, exit 77). */
static void test_agrees_with_pahole_on_glibc(void **state)
{
    (void)state;
    if (run("readelf -n /lib/x86_64-linux-gnu/libc.so.6 | awk '/Build ID/ {print $3}'") != 0 ||
        strlen(output) < 3)
        fail_msg("no build id in /lib/x86_64-linux-gnu/libc.so.6: %s", output);
    char debug[300];
    snprintf(debug, sizeof debug, "/usr/lib/debug/.build-id/%.2s/%.*s.debug", output,
             (int)strcspn(output + 2, "\n"), output + 2);
    struct stat st;
    if (stat(debug, &st) != 0) {
        print_message("no %s (apt-get install libc6-dbg): skipped\n", debug);
        skip();
    }
    assert_true(compare_with_pahole(debug) >= 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c_declarators),
        cmocka_unit_test(test_json_and_markdown),
        cmocka_unit_test(test_cplusplus_declarations),
        cmocka_unit_test(test_type_names),
        cmocka_unit_test(test_agrees_with_pahole_on_glibc_headers),
        cmocka_unit_test(test_agrees_with_pahole_on_glibc),
    };
    return cmocka_run_group_tests_name("layout_text", tests, setup, teardown);
}
