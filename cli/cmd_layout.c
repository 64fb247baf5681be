/* qaudit layout: struct layouts from DWARF, as text, JSON or Markdown. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "option_parse.h"
#include "probe/functions.h"
#include "probe/layout.h"
#include "probe/layout_render.h"
#include "probe/reorder.h"
#include "probe/type_match.h"

static const char layout_usage[] =
    "usage: qaudit layout BINARY [--type NAME]... [--format text|json|md] [--cacheline N]\n"
    "                     [--min-holes N] [--debug-file FILE] [--expand] [--stats] [--first]\n"
    "       qaudit layout BINARY --functions PATTERN... [--format text|json|md]\n"
    "  --type NAME        a struct, class or union (repeatable; all by default): with or without\n"
    "                     its namespaces and classes (Pair2<int, 3> finds lc::Pair2<int, 3>;\n"
    "                     every match is shown), any spacing in template arguments, globs;\n"
    "                     -C NAME is the same, as in pahole\n"
    "  --format text|json|md  pahole-like text (default), qaudit-layout/1 JSON, or Markdown\n"
    "  --cacheline N      cache-line size for boundaries and straddles (default 64)\n"
    "  --min-holes N      only types with at least N holes\n"
    "  --debug-file FILE  read DWARF from FILE (default: BINARY, or its separate debug file)\n"
    "  --expand           also list the members of struct and union members, at absolute offsets\n"
    "  --stats            say on stderr how many DWARF units were read (exact --type names are\n"
    "                     looked up in .debug_names or .gdb_index when the binary has one)\n"
    "  --reorganize       after each struct, the order that sorts its members by alignment\n"
    "                     (largest first) when that is smaller, with its size and classes, or\n"
    "                     why none is suggested; text only (-R, as in pahole)\n"
    "  --first            with --type and no index: stop at the first unit that defines every\n"
    "                     NAME, as pahole -C does (fast on vmlinux; a different definition in a\n"
    "                     later unit, an ODR conflict, then goes unseen)\n"
    "  --functions PATTERN  instead: matching functions with their code size (ELF symbols, clones\n"
    "                     such as .cold and .constprop.N included) and how often DWARF says they\n"
    "                     were inlined (repeatable)\n";

static bool selected(const struct layout_set *set, const struct layout_type *t, char **patterns,
                     size_t n, long min_holes)
{
    if ((long)t->hole_count < min_holes)
        return false;
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (layout_type_matches(set, t, patterns[i]))
            return true;
    return false;
}

/* --functions: code sizes and inline counts instead of layouts. */
static int print_functions(const char *binary, const char *debug_file, char **patterns, size_t n,
                           const char *format)
{
    struct function_set set;
    bool has_dwarf;
    char error[512];
    if (functions_read(binary, debug_file, (const char *const *)patterns, n, &set, &has_dwarf,
                       error, sizeof error) != LAYOUT_OK) {
        fprintf(stderr, "qaudit layout: %s\n", error);
        return 2;
    }
    int status = 0;
    for (size_t p = 0; p < n; p++) {
        uint64_t size;
        if (!functions_code_size(&set, patterns[p], &size)) {
            fprintf(stderr, "qaudit layout: no function matches '%s' in %s\n", patterns[p], binary);
            status = 2;
        }
    }
    if (!has_dwarf)
        fprintf(stderr,
                "qaudit layout: %s has no DWARF: inline counts are 0 (rebuild with -g or "
                "pass --debug-file)\n",
                binary);
    if (format[0] == 'j') {
        json_t *doc = json_pack("{s:s, s:s, s:o}", "format", "qaudit-functions/1", "binary", binary,
                                "functions", functions_json(&set));
        json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(doc);
    } else if (format[0] == 'm') {
        functions_print_markdown(stdout, &set);
    } else {
        functions_print_text(stdout, &set);
    }
    functions_free(&set);
    return status;
}

/* A binary small enough to read whole again for a suggestion on a name that matched nothing
 * (an error path: glibc's 2,063 units read whole in 0.7 s; not a kernel's or a compiler's). */
#define SUGGEST_UNITS_AT_MOST 2500

/* The type nearest to pattern (another case, a misspelling, a prefix), by its name without its
 * namespaces or with them; NULL when none is near or the binary is too large to look. The
 * caller's set holds only the types its names chose, so every type is read again. */
static char *nearest_type(const char *binary, const char *debug_file, const char *pattern,
                          size_t units_total)
{
    if (units_total > SUGGEST_UNITS_AT_MOST)
        return NULL;
    struct layout_set all = {0};
    struct layout_options everything = {debug_file, false, NULL, 0};
    char error[512], *nearest = NULL;
    const char **names = NULL;
    if (layout_read(binary, &everything, &all, error, sizeof error) != LAYOUT_OK ||
        (names = calloc(2 * all.count + 1, sizeof *names)) == NULL) {
        layout_free(&all);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < all.count; i++) {
        const char *full = all.types[i].name, *scope = strrchr(full, ':');
        names[n++] = full;
        if (scope != NULL && strchr(full, '<') == NULL) /* lc::conn: conn too */
            names[n++] = scope + 1;
    }
    const char *near = NULL;
    for (size_t i = 0; i < n && near == NULL; i++) /* RXQ: rxq, however far by edits */
        if (strcasecmp(names[i], pattern) == 0)
            near = names[i];
    if (near == NULL)
        near = nearest_name(pattern, names, n);
    if (near != NULL)
        nearest = strdup(near);
    free(names);
    layout_free(&all);
    return nearest;
}

/* --reorganize: the order by alignment when it is smaller, printed as any layout; else one
 * comment line that says why there is none. False when out of memory. */
static bool print_reorganized(const struct layout_type *t, unsigned cacheline)
{
    struct layout_reorganized r;
    if (!layout_reorganize(t, &r))
        return false;
    if (r.not_applicable != NULL)
        printf("/* --reorganize: %s %s: n/a, %s */\n\n", t->kind, t->name, r.not_applicable);
    else if (!r.smaller)
        printf("/* --reorganize: %s %s: no order by alignment is smaller than its %" PRIu64
               " %s */\n\n",
               t->kind, t->name, t->size, t->size == 1 ? "byte" : "bytes");
    else {
        printf("/* --reorganize: %s %s by alignment, largest first: %" PRIu64 " bytes, %" PRIu64
               " less (a suggestion: the compiler laid out the one above) */\n",
               t->kind, t->name, r.type.size, t->size - r.type.size);
        layout_print_text(stdout, &r.type, cacheline);
    }
    layout_reorganized_free(&r);
    return true;
}

/* --format: text, json or md. */
static bool layout_format(void *to, char *value)
{
    if (strcmp(value, "text") != 0 && strcmp(value, "json") != 0 && strcmp(value, "md") != 0) {
        fprintf(stderr, "qaudit layout: --format wants text, json or md, got '%s'\n", value);
        return false;
    }
    *(const char **)to = value;
    return true;
}

int command_layout(int argc, char **argv)
{
    struct option_list patterns = {calloc((size_t)argc, sizeof(char *)), 0};
    struct option_list functions = {calloc((size_t)argc, sizeof(char *)), 0};
    const char *format = "text", *debug_file = NULL;
    bool expand = false, stats = false, first = false, reorganize = false;
    long cacheline = 64, min_holes = 0;
    int operand = 0, status = 0;
    struct layout_set set = {0};
    const struct option_spec specs[] = {
        {"type", 'C', OPTION_VALUE, OPTION_LIST, &patterns, 0, NULL, "a type (-C: pahole's)"},
        {"format", 0, OPTION_VALUE, OPTION_CALL, &format, 0, layout_format, "text, json or md"},
        {"cacheline", 0, OPTION_VALUE, OPTION_NUMBER, &cacheline, 1, NULL, "cache-line size"},
        {"min-holes", 0, OPTION_VALUE, OPTION_NUMBER, &min_holes, 0, NULL, "holes at least"},
        {"debug-file", 0, OPTION_VALUE, OPTION_STRING, &debug_file, 0, NULL, "DWARF from"},
        {"expand", 0, OPTION_NO_VALUE, OPTION_SET, &expand, 0, NULL, "members' members"},
        {"functions", 0, OPTION_VALUE, OPTION_LIST, &functions, 0, NULL, "code sizes instead"},
        {"stats", 0, OPTION_NO_VALUE, OPTION_SET, &stats, 0, NULL, "units read"},
        {"first", 0, OPTION_NO_VALUE, OPTION_SET, &first, 0, NULL, "stop at first definitions"},
        {"reorganize", 'R', OPTION_NO_VALUE, OPTION_SET, &reorganize, 0, NULL, "by alignment"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {0}};
    const struct option_table table = {"layout", layout_usage, false, specs};
    int parsed = option_parse(&table, argc, argv, &operand);
    if (parsed != OPTIONS_PARSED) {
        status = parsed;
        goto done;
    }
    if (operand < argc - 1) { /* pahole's `pahole -C NAME BINARY`, or `layout BINARY NAME` */
        char problem[256];
        snprintf(problem, sizeof problem,
                 "expected one BINARY, got %d arguments ('%s', '%s'%s): a type is named with "
                 "--type NAME or -C NAME",
                 argc - operand, argv[operand], argv[operand + 1],
                 argc - operand > 2 ? ", ..." : "");
        status = usage_error("layout", problem);
        goto done;
    }
    if (operand != argc - 1) {
        status = usage_error("layout", "expected one BINARY");
        goto done;
    }
    if (reorganize && strcmp(format, "text") != 0) {
        status = usage_error("layout", "--reorganize prints text only");
        goto done;
    }
    const char *binary = argv[operand];
    if (functions.count > 0) {
        status = print_functions(binary, debug_file, functions.items, functions.count, format);
        goto done;
    }
    char error[512];
    struct layout_options read_options = {debug_file, expand, (const char *const *)patterns.items,
                                          patterns.count};
    if ((first ? layout_read_first : layout_read)(binary, &read_options, &set, error,
                                                  sizeof error) != LAYOUT_OK) {
        fprintf(stderr, "qaudit layout: %s\n", error);
        status = 2;
        goto done;
    }
    if (stats && first && set.index_used == NULL)
        fprintf(stderr,
                "qaudit layout: read %zu unit%s (--first: up to the first definitions), "
                "%zu types\n",
                set.units_read, set.units_read == 1 ? "" : "s", set.count);
    else if (stats)
        fprintf(stderr, "qaudit layout: read %zu of %zu units%s, %zu types\n", set.units_read,
                set.units_total, set.index_used ? set.index_used : "", set.count);
    struct layout_json_writer json;
    if (format[0] == 'j')
        layout_json_begin(&json, stdout, binary, (unsigned)cacheline);
    for (size_t i = 0; i < set.count; i++) {
        const struct layout_type *t = &set.types[i];
        if (!selected(&set, t, patterns.items, patterns.count, min_holes))
            continue;
        if (format[0] == 'j') {
            if (!layout_json_type(&json, t)) {
                fprintf(stderr, "qaudit layout: out of memory\n");
                status = 2;
                goto done;
            }
        } else if (format[0] == 'm')
            layout_print_markdown(stdout, t);
        else
            layout_print_text(stdout, t, (unsigned)cacheline);
        if (reorganize && !print_reorganized(t, (unsigned)cacheline)) {
            fprintf(stderr, "qaudit layout: out of memory\n");
            status = 2;
            goto done;
        }
    }
    for (size_t p = 0; p < patterns.count; p++) {
        bool found = false;
        for (size_t i = 0; i < set.count && !found; i++)
            found = layout_type_matches(&set, &set.types[i], patterns.items[p]);
        if (!found) {
            char *near = strpbrk(patterns.items[p], "*?[") == NULL
                             ? nearest_type(binary, debug_file, patterns.items[p], set.units_total)
                             : NULL;
            fprintf(stderr, "qaudit layout: no struct, class or union matches '%s' in %s%s%s%s\n",
                    patterns.items[p], binary, near ? " (did you mean " : "", near ? near : "",
                    near ? "?)" : "");
            free(near);
            status = 2;
        }
    }
    if (format[0] == 'j')
        layout_json_end(&json);
done:
    layout_free(&set);
    free(patterns.items);
    free(functions.items);
    return status;
}
