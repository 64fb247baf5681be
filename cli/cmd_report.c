/* qaudit report: dumps read, merged and symbolized, with optional struct layouts, rendered as
 * text, Markdown, JSON or HTML, or exported as a pprof profile or folded stacks. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "option_parse.h"
#include "probe/layout.h"
#include "reports/layout_file.h"
#include "reports/render.h"
#include "reports/report.h"

static const char report_usage[] =
    "usage: qaudit report DUMP... [--binary BINARY [--debug-file FILE]] [--layout FILE]\n"
    "                     [--type NAME]... [--skip GLOB]... [--run ID] [--pid N]...\n"
    "                     [--program NAME]...\n"
    "                     [--format text|md|json|html|pprof|folded] [--weight allocs|bytes|live]\n"
    "                     [-o FILE] [--top N] [--cacheline N] [--no-symbols] [--long-names]\n"
    "  DUMP...            qaudit-alloc/1 dumps, directories or quoted globs (the dumps among\n"
    "                     their files; with them, the dumps of the same runs that processes\n"
    "                     which could not write there left in the fallback directory); several\n"
    "                     are merged (processes, hosts); of the dumps of one process image\n"
    "                     (pid, start time) the latest sequence is counted, and a dump given\n"
    "                     twice (or a copy) counts once\n"
    "  --run ID           only the dumps of the qaudit run with this id (process.run_id)\n"
    "  --pid N            only the dumps of pid N (again for more pids)\n"
    "  --program NAME     only the dumps of the program NAME: a glob on the executable's file\n"
    "                     name or the first word of its process title (again for more)\n"
    "  --binary BINARY    symbolize the main program from BINARY, and show its struct layouts\n"
    "                     (DWARF from BINARY, or its debug file found by build id, debuglink\n"
    "                     or under /usr/lib/debug; without DWARF the report says so)\n"
    "  --debug-file FILE  BINARY's separate debug file, when it is elsewhere\n"
    "  --layout FILE      struct layouts from a qaudit-layout/1 file instead\n"
    "  --type NAME        structs to show (default: connection and rxq, when present)\n"
    "  --skip GLOB        fold the frame of a function matching GLOB, and every frame inside\n"
    "                     it, into its caller, so a site is where the program called its\n"
    "                     allocation wrapper; adds to the defaults (zmalloc*, xmalloc, g_malloc*,\n"
    "                     operator new*, ...) and to the wrappers the stacks show (a function\n"
    "                     that allocates only for 4 or more callers); --skip none drops both\n"
    "  --format FORMAT    text (default), md, json (qaudit-report/1) or html (self-contained);\n"
    "                     pprof: a gzipped profile.proto heap profile (go tool pprof, Pyroscope,\n"
    "                     Parca); folded: one line per stack and its count (flamegraph.pl,\n"
    "                     speedscope)\n"
    "  --weight WHAT      folded: count allocations (default), bytes allocated, or bytes live\n"
    "  -o FILE            write there instead of standard output\n"
    "  --top N            sites per ranking (default 10)\n"
    "  --no-symbols       leave frames as module+offset\n"
    "  --long-names       C++ names in full (text, md, html); shortened by default: std::string,\n"
    "                     default template arguments left out, long argument lists <...>\n"
    "Exit 0: no check in the dumps failed (n/a checks do not fail); 1: some check failed;\n"
    "2: bad usage or input.\n";

struct report_request {
    const char *binary, *debug_file, *layout_file, *output;
    enum report_format format;
    enum report_weight weight;
    bool has_weight;
    struct option_list types;
    const char **skip; /* the globs to fold: the defaults unless --skip none, then --skip's */
    size_t skip_count;
    bool skip_defaults;
    long top, cacheline;
    bool symbols, long_names;
    const char *run;
    long *pids;
    const char **programs;
    size_t pid_count, program_count;
    int operand; /* the first DUMP */
};

/* --pid's value: a whole decimal from 1 to INT_MAX (pid_max reaches 2^22). */
static bool pid_parse(const char *text, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 1 || v > INT_MAX)
        return false;
    *out = v;
    return true;
}

/* --run's id: as QAUDIT_RUN_ID is spelled (letters, digits, '-', '_'; 1 to 32). */
static bool run_id_valid(const char *id)
{
    size_t n = strlen(id);
    return n >= 1 && n <= 32 &&
           strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == n;
}

/* --weight is for folded stacks; pprof is binary: not for a terminal. */
static bool export_options_valid(const struct report_request *q)
{
    if (q->has_weight && q->format != REPORT_FOLDED) {
        fprintf(stderr, "qaudit report: --weight goes with --format folded\n");
        return false;
    }
    if (q->format == REPORT_PPROF && q->output == NULL && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "qaudit report: --format pprof writes gzipped protobuf: give -o FILE "
                        "(or redirect standard output)\n");
        return false;
    }
    return true;
}

/* --format, --weight, --run, --pid, --program and --skip: each value checked, or one line. */
static bool report_format(void *to, char *value)
{
    if (report_format_parse(value, to))
        return true;
    fprintf(stderr,
            "qaudit report: --format wants text, md, json, html, pprof or folded, got '%s'\n",
            value);
    return false;
}

static bool report_weight(void *to, char *value)
{
    struct report_request *q = to;
    if (!report_weight_parse(value, &q->weight)) {
        fprintf(stderr, "qaudit report: --weight wants allocs, bytes or live, got '%s'\n", value);
        return false;
    }
    q->has_weight = true;
    return true;
}

static bool report_run(void *to, char *value)
{
    if (!run_id_valid(value)) {
        fprintf(stderr,
                "qaudit report: --run wants a run id (letters, digits, - and _; 1 to 32), "
                "got '%s'\n",
                value);
        return false;
    }
    *(const char **)to = value;
    return true;
}

static bool report_pid(void *to, char *value)
{
    struct report_request *q = to;
    if (!pid_parse(value, &q->pids[q->pid_count])) {
        fprintf(stderr, "qaudit report: --pid wants a process id (1 or more), got '%s'\n", value);
        return false;
    }
    q->pid_count++;
    return true;
}

static bool report_program(void *to, char *value)
{
    struct report_request *q = to;
    if (value[0] == '\0') {
        fprintf(stderr, "qaudit report: --program wants a name\n");
        return false;
    }
    q->programs[q->program_count++] = value;
    return true;
}

static bool report_skip(void *to, char *value)
{
    struct report_request *q = to;
    if (strcmp(value, "none") == 0)
        q->skip_defaults = false;
    else
        q->skip[q->skip_count++] = value;
    return true;
}

static bool parse_report_options(int argc, char **argv, struct report_request *q)
{
    const struct option_spec specs[] = {
        {"binary", 0, OPTION_VALUE, OPTION_STRING, &q->binary, 0, NULL, "symbols and layouts"},
        {"layout", 0, OPTION_VALUE, OPTION_STRING, &q->layout_file, 0, NULL, "a layout file"},
        {"type", 0, OPTION_VALUE, OPTION_LIST, &q->types, 0, NULL, "a struct to show"},
        {"format", 0, OPTION_VALUE, OPTION_CALL, &q->format, 0, report_format, "how to render"},
        {"top", 0, OPTION_VALUE, OPTION_NUMBER, &q->top, 1, NULL, "sites shown"},
        {"cacheline", 0, OPTION_VALUE, OPTION_NUMBER, &q->cacheline, 1, NULL, "cache-line size"},
        {"no-symbols", 0, OPTION_NO_VALUE, OPTION_CLEAR, &q->symbols, 0, NULL, "module+offset"},
        {"skip", 0, OPTION_VALUE, OPTION_CALL, q, 0, report_skip, "wrappers to fold"},
        {"debug-file", 0, OPTION_VALUE, OPTION_STRING, &q->debug_file, 0, NULL, "DWARF from"},
        {"weight", 0, OPTION_VALUE, OPTION_CALL, q, 0, report_weight, "folded stacks' weight"},
        {"run", 0, OPTION_VALUE, OPTION_CALL, &q->run, 0, report_run, "one run's dumps"},
        {"pid", 0, OPTION_VALUE, OPTION_CALL, q, 0, report_pid, "one process's dumps"},
        {"program", 0, OPTION_VALUE, OPTION_CALL, q, 0, report_program, "one program's dumps"},
        {"long-names", 0, OPTION_NO_VALUE, OPTION_SET, &q->long_names, 0, NULL, "names whole"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {NULL, 'o', OPTION_VALUE, OPTION_STRING, &q->output, 0, NULL, "output file"},
        {0}};
    const struct option_table table = {"report", report_usage, false, specs};
    int parsed = option_parse(&table, argc, argv, &q->operand);
    if (parsed == 0)
        exit(0); /* --help */
    if (parsed != OPTIONS_PARSED)
        return false;
    if (q->operand >= argc) {
        usage_error("report", "expected at least one DUMP");
        return false;
    }
    if (q->binary && q->layout_file) {
        fprintf(stderr, "qaudit report: give --binary or --layout, not both\n");
        return false;
    }
    if (q->debug_file && !q->binary) {
        fprintf(stderr, "qaudit report: --debug-file goes with --binary\n");
        return false;
    }
    return export_options_valid(q);
}

/* A note listing structs of set worth a --type: those whose size falls in the requested-size
 * buckets with the most allocations (names starting with '_' are the C library's). */
static char *candidate_note(const struct report *r, const struct layout_set *set,
                            const char *binary)
{
    const struct layout_type *best[8] = {0};
    uint64_t score[8] = {0};
    for (size_t i = 0; i < set->count; i++) {
        const struct layout_type *t = &set->types[i];
        if (t->name[0] == '_' || t->name[0] == '\0' || t->size == 0 || strchr(t->name, '<'))
            continue;
        uint64_t allocs = 0;
        for (size_t b = 0; b < r->requested_count; b++)
            if (t->size >= r->requested_sizes[b].from && t->size <= r->requested_sizes[b].to)
                allocs = r->requested_sizes[b].count;
        for (size_t k = 0; k < 8; k++)
            if (best[k] == NULL || allocs > score[k] ||
                (allocs == score[k] && t->size > best[k]->size)) {
                memmove(&best[k + 1], &best[k], (7 - k) * sizeof *best);
                memmove(&score[k + 1], &score[k], (7 - k) * sizeof *score);
                best[k] = t;
                score[k] = allocs;
                break;
            }
    }
    char *note = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&note, &size);
    if (out == NULL)
        return NULL;
    fprintf(out, "%s defines no struct named connection or rxq (the defaults of --type)", binary);
    for (size_t k = 0; k < 8 && best[k]; k++)
        fprintf(out, "%s%s (%llu B, %llu allocations in its size bucket)",
                k ? ", " : "; structs it defines, those of the most allocated sizes first: ",
                best[k]->name, (unsigned long long)best[k]->size, (unsigned long long)score[k]);
    fprintf(out, "%s.", best[0] ? ". Show one with --type NAME" : ", nor any other struct");
    fclose(out);
    return note;
}

/* Why a binary gave no layouts. Without DWARF: where its debug file was looked for (libdwfl's
 * search: build id, .gnu_debuglink beside it, in .debug/ and under /usr/lib/debug). */
static char *no_layout_note(const struct report *r, const char *binary, const char *why)
{
    char *note = NULL;
    if (strstr(why, "no DWARF") == NULL) {
        if (asprintf(&note, "No struct layouts: %s.", why) < 0)
            return NULL;
        return note;
    }
    const char *id = "";
    for (size_t i = 0; i < r->module_count; i++)
        if (r->modules[i].is_main)
            id = r->modules[i].build_id;
    char where[256] = "by build id";
    if (strlen(id) > 2)
        snprintf(where, sizeof where, "by build id at /usr/lib/debug/.build-id/%.2s/%s.debug", id,
                 id + 2);
    if (asprintf(&note,
                 "No struct layouts: %s has no DWARF, and no debug file was found for it (%s, "
                 "by its .gnu_debuglink beside it, in .debug/ and under /usr/lib/debug). "
                 "Install its debug package (-dbgsym) or pass --debug-file FILE; the rest of "
                 "the report does not need it.",
                 binary, where) < 0)
        return NULL;
    return note;
}

/* The layouts to show: the --type names (each must exist), or connection and rxq if present.
 * A binary without DWARF leaves *note saying why, and no layouts: the report goes on. */
static bool load_layouts(const struct report_request *q, const struct report *r,
                         struct layout_set *set, const struct layout_type ***chosen, size_t *count,
                         char **note, char *error, size_t size)
{
    *count = 0;
    if (q->binary == NULL && q->layout_file == NULL)
        return true;
    if (q->binary) {
        struct layout_options read = {q->debug_file, false, (const char *const *)q->types.items,
                                      q->types.count};
        char why[1024];
        if (layout_read(q->binary, &read, set, why, sizeof why) != LAYOUT_OK) {
            *note = no_layout_note(r, q->binary, why);
            return true;
        }
    } else if (layout_file_read(q->layout_file, set, error, size) != REPORT_OK) {
        return false;
    }
    if (q->types.count > 0)
        return layout_select(set, (const char *const *)q->types.items, q->types.count, chosen,
                             count, error, size) == REPORT_OK;
    static const char *const defaults[] = {"connection", "rxq"};
    *chosen = calloc(3, sizeof **chosen);
    for (size_t d = 0; d < 2 && *chosen; d++) {
        const struct layout_type **one = NULL;
        size_t n = 0;
        char ignored[256];
        if (layout_select(set, &defaults[d], 1, &one, &n, ignored, sizeof ignored) == REPORT_OK)
            (*chosen)[(*count)++] = one[0];
        free(one);
    }
    if (*count == 0)
        *note = candidate_note(r, set, q->binary ? q->binary : q->layout_file);
    return true;
}

int command_report(int argc, char **argv)
{
    struct report_request q = {
        .format = REPORT_TEXT, .top = 10, .cacheline = 64, .symbols = true, .skip_defaults = true};
    q.types.items = calloc((size_t)argc, sizeof *q.types.items);
    q.skip = calloc((size_t)argc, sizeof *q.skip);
    q.pids = calloc((size_t)argc, sizeof *q.pids);
    q.programs = calloc((size_t)argc, sizeof *q.programs);
    struct report r = {0};
    struct dump_list dumps = {0};
    struct layout_set set = {0};
    const struct layout_type **layouts = NULL;
    size_t layout_count = 0;
    char error[1024], *note = NULL;
    int status = 2;
    FILE *out = stdout;
    if (q.types.items == NULL || q.skip == NULL || q.pids == NULL || q.programs == NULL ||
        !parse_report_options(argc, argv, &q))
        goto done;
    struct report_load_settings load = {.binary = q.binary,
                                        .debug_file = q.debug_file,
                                        .symbols = q.symbols,
                                        .skip_defaults = q.skip_defaults,
                                        .skip = (const char *const *)q.skip,
                                        .skip_count = q.skip_count};
    struct dump_filter filter = {q.run, q.pids, q.pid_count, q.programs, q.program_count};
    bool expanded = true;
    for (int i = q.operand; i < argc && expanded; i++)
        expanded = expand_dumps(argv[i], &dumps, error, sizeof error);
    if (!expanded || !dump_list_pick(&dumps, &filter, "report", error, sizeof error) ||
        !report_load_ready((const char *const *)dumps.paths, dumps.count, &load, &r, error,
                           sizeof error) ||
        !load_layouts(&q, &r, &set, &layouts, &layout_count, &note, error, sizeof error)) {
        fprintf(stderr, "qaudit report: %s\n", error);
        goto done;
    }
    if (q.output != NULL && (out = fopen(q.output, "w")) == NULL) {
        fprintf(stderr, "qaudit report: cannot write %s: %s\n", q.output, strerror(errno));
        out = stdout;
        goto done;
    }
    /* A report of tens of thousands of sites is written in many small pieces: buffer them. */
    static char buffer[1 << 20];
    setvbuf(out, buffer, _IOFBF, sizeof buffer);
    struct report_options options = {.top = (unsigned)q.top,
                                     .cacheline = (unsigned)q.cacheline,
                                     .layouts = layouts,
                                     .layout_count = layout_count,
                                     .layout_source = q.binary ? q.binary : q.layout_file,
                                     .layout_note = note,
                                     .weight = q.weight,
                                     .long_names = q.long_names,
                                     .warn = stderr};
    report_render(out, &r, q.format, &options);
    status = report_passed(&r) ? REPORT_OK : REPORT_CHECK_FAILED;
    if (!write_finished("report", out, q.output ? q.output : "standard output"))
        status = 2;
    out = stdout;
done:
    if (out != stdout)
        fclose(out);
    free(note);
    free(layouts);
    layout_free(&set);
    report_free(&r);
    dump_list_free(&dumps);
    free(q.types.items);
    free(q.skip);
    free(q.pids);
    free(q.programs);
    return status;
}
