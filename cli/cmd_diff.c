/* qaudit diff BASE NEW: two runs (each a dump, a directory of dumps or a glob) compared site by
 * site, in text, Markdown, JSON or HTML; or the two as pprof profiles for go tool pprof
 * -diff_base. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "option_parse.h"
#include "reports/diff.h"
#include "reports/render.h"
#include "reports/report.h"

static const char diff_usage[] =
    "usage: qaudit diff BASE NEW [--binary BINARY] [--base-binary BINARY] [--sort WHAT]\n"
    "                   [--format text|md|json|html|pprof] [-o FILE] [--top N] [--skip GLOB]...\n"
    "                   [--no-symbols]\n"
    "  BASE, NEW          each a qaudit-alloc/1 dump, or a directory or a quoted glob\n"
    "                     ('old/qaudit-*.json') standing for the dumps among its files and\n"
    "                     those of their runs in the fallback directory; a side is merged\n"
    "  --binary BINARY    the main program's file for symbols (both sides)\n"
    "  --base-binary BIN  BASE's own (another build), when NEW's is --binary\n"
    "  --sort WHAT        rank sites by the change in allocs, bytes (default), live or temporary\n"
    "  --format FORMAT    text (default), md, json (qaudit-diff/1), html; pprof: BASE and NEW as\n"
    "                     two profiles in the directory -o names, for go tool pprof -diff_base\n"
    "  -o FILE            write there instead of standard output (pprof: a directory)\n"
    "  --top N            sites shown (default 20; json has every site)\n"
    "  --skip GLOB        fold allocation wrappers, as qaudit report does (--skip none: none)\n"
    "  --no-symbols       leave frames as module+offset (sites then match within one build)\n"
    "Sites match by the functions of their frames, so two builds compare. Exit 0, or 2 on bad\n"
    "usage or input.\n";

struct diff_request {
    const char *binary, *base_binary, *output;
    enum report_format format;
    enum diff_figure sort;
    long top;
    struct report_load_settings load;
    const char **skip;
    int operand; /* BASE */
};

/* --format (no folded stacks), --sort and --skip: each value checked, or one line. */
static bool diff_format(void *to, char *value)
{
    enum report_format *format = to;
    if (!report_format_parse(value, format) || *format == REPORT_FOLDED) {
        fprintf(stderr, "qaudit diff: --format wants text, md, json, html or pprof, got '%s'\n",
                value);
        return false;
    }
    return true;
}

static bool diff_sort(void *to, char *value)
{
    if (!diff_figure_parse(value, to)) {
        fprintf(stderr, "qaudit diff: --sort wants allocs, bytes, live or temporary, got '%s'\n",
                value);
        return false;
    }
    return true;
}

static bool diff_skip(void *to, char *value)
{
    struct diff_request *q = to;
    if (strcmp(value, "none") == 0)
        q->load.skip_defaults = false;
    else
        q->skip[q->load.skip_count++] = value;
    return true;
}

static bool parse_diff_options(int argc, char **argv, struct diff_request *q)
{
    const struct option_spec specs[] = {
        {"binary", 0, OPTION_VALUE, OPTION_STRING, &q->binary, 0, NULL, "NEW's binary"},
        {"base-binary", 0, OPTION_VALUE, OPTION_STRING, &q->base_binary, 0, NULL, "BASE's"},
        {"format", 0, OPTION_VALUE, OPTION_CALL, &q->format, 0, diff_format, "how to render"},
        {"sort", 0, OPTION_VALUE, OPTION_CALL, &q->sort, 0, diff_sort, "the figure sorted by"},
        {"top", 0, OPTION_VALUE, OPTION_NUMBER, &q->top, 1, NULL, "sites shown"},
        {"skip", 0, OPTION_VALUE, OPTION_CALL, q, 0, diff_skip, "wrappers to fold"},
        {"no-symbols", 0, OPTION_NO_VALUE, OPTION_CLEAR, &q->load.symbols, 0, NULL, "offsets"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {NULL, 'o', OPTION_VALUE, OPTION_STRING, &q->output, 0, NULL, "output file"},
        {0}};
    const struct option_table table = {"diff", diff_usage, false, specs};
    int parsed = option_parse(&table, argc, argv, &q->operand);
    if (parsed == 0)
        exit(0); /* --help */
    if (parsed != OPTIONS_PARSED)
        return false;
    if (argc - q->operand != 2) {
        usage_error("diff", "expected BASE and NEW");
        return false;
    }
    if (q->format == REPORT_PPROF && q->output == NULL) {
        usage_error("diff", "--format pprof writes two files: give -o DIRECTORY");
        return false;
    }
    return true;
}

/* One side: its dumps expanded, loaded, symbolized with its binary, wrappers folded. */
static bool load_side(const char *arg, const struct diff_request *q, const char *binary,
                      struct report *r)
{
    struct dump_list list = {0};
    char error[1024];
    struct report_load_settings load = q->load;
    load.binary = binary;
    struct dump_filter all = {0};
    bool ok = expand_dumps(arg, &list, error, sizeof error) &&
              dump_list_pick(&list, &all, "diff", error, sizeof error) &&
              report_load_ready((const char *const *)list.paths, list.count, &load, r, error,
                                sizeof error);
    if (!ok)
        fprintf(stderr, "qaudit diff: %s\n", error);
    dump_list_free(&list);
    return ok;
}

/* pprof's -diff_base merges the two profiles, which it refuses unless their period types agree:
 * sampled by count ("objects") against anything else does not. */
static bool same_period(const struct report *a, const struct report *b)
{
    bool count_a = a->process_count && a->processes[0].sampling == SAMPLING_COUNT;
    bool count_b = b->process_count && b->processes[0].sampling == SAMPLING_COUNT;
    return count_a == count_b;
}

/* BASE and NEW as DIR/base.pb.gz and DIR/new.pb.gz, and the command that compares them. */
static int write_pprof_pair(const char *dir, const struct report *runs[2])
{
    if (!same_period(runs[0], runs[1])) {
        fprintf(stderr, "qaudit diff: one side was sampled by count and the other not: go tool "
                        "pprof cannot diff their profiles (use --format text, md, json or html)\n");
        return 2;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "qaudit diff: cannot make %s: %s\n", dir, strerror(errno));
        return 2;
    }
    static const char *const names[2] = {"base.pb.gz", "new.pb.gz"};
    char paths[2][4096];
    for (int side = 0; side < 2; side++) {
        snprintf(paths[side], sizeof paths[side], "%s/%s", dir, names[side]);
        FILE *out = fopen(paths[side], "w");
        if (out == NULL) {
            fprintf(stderr, "qaudit diff: cannot write %s: %s\n", paths[side], strerror(errno));
            return 2;
        }
        struct report_options options = {.top = 10, .warn = stderr};
        report_render(out, runs[side], REPORT_PPROF, &options);
        if (!write_finished("diff", out, paths[side]))
            return 2;
    }
    printf("go tool pprof -diff_base %s %s\n", paths[0], paths[1]);
    return 0;
}

static int render(const struct diff_request *q, const struct report *runs[2])
{
    if (q->format == REPORT_PPROF)
        return write_pprof_pair(q->output, runs);
    struct report_diff diff;
    if (!report_diff(runs[0], runs[1], q->sort, &diff)) {
        fprintf(stderr, "qaudit diff: out of memory matching the sites\n");
        return 2;
    }
    FILE *out = q->output ? fopen(q->output, "w") : stdout;
    int status = 0;
    if (out == NULL) {
        fprintf(stderr, "qaudit diff: cannot write %s: %s\n", q->output, strerror(errno));
        status = 2;
    } else {
        report_diff_render(out, &diff, q->format, (unsigned)q->top);
        if (!write_finished("diff", out, q->output ? q->output : "standard output"))
            status = 2;
    }
    report_diff_free(&diff);
    return status;
}

int command_diff(int argc, char **argv)
{
    struct diff_request q = {.format = REPORT_TEXT, .sort = DIFF_BYTES, .top = 20};
    q.load = (struct report_load_settings){.symbols = true, .skip_defaults = true};
    q.skip = calloc((size_t)argc + 1, sizeof *q.skip);
    q.load.skip = q.skip;
    struct report base = {0}, new_run = {0};
    int status = 2;
    if (q.skip != NULL && parse_diff_options(argc, argv, &q) &&
        load_side(argv[q.operand], &q, q.base_binary ? q.base_binary : q.binary, &base) &&
        load_side(argv[q.operand + 1], &q, q.binary, &new_run)) {
        report_fold_alike(&base, &new_run); /* sites match by their frames' names */
        report_fold_alike(&new_run, &base);
        const struct report *runs[2] = {&base, &new_run};
        status = render(&q, runs);
    }
    report_free(&base);
    report_free(&new_run);
    free(q.skip);
    return status;
}
