/* qaudit report: dumps read, merged and symbolized, with optional struct layouts, rendered as
 * text, Markdown, JSON or HTML. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "probe/layout.h"
#include "reports/layout_file.h"
#include "reports/render.h"
#include "reports/report.h"

static const char report_usage[] =
    "usage: qaudit report DUMP... [--binary BINARY] [--layout FILE] [--type NAME]...\n"
    "                     [--format text|md|json|html] [-o FILE] [--top N] [--cacheline N]\n"
    "                     [--no-symbols]\n"
    "  DUMP...            qaudit-alloc/1 dumps; several are merged (processes, hosts), and an\n"
    "                     earlier snapshot of a process is superseded by its later dump\n"
    "  --binary BINARY    symbolize the main program from BINARY, and show its struct layouts\n"
    "  --layout FILE      struct layouts from a qaudit-layout/1 file instead\n"
    "  --type NAME        structs to show (default: connection and rxq, when present)\n"
    "  --format FORMAT    text (default), md, json (qaudit-report/1) or html (self-contained)\n"
    "  -o FILE            write there instead of standard output\n"
    "  --top N            sites per ranking (default 10)\n"
    "  --no-symbols       leave frames as module+offset\n"
    "Exit 0: every check in the dumps passed; 1: some check failed; 2: bad usage or input.\n";

struct report_request {
    const char *binary, *layout_file, *output;
    enum report_format format;
    char **types;
    size_t type_count;
    long top, cacheline;
    bool symbols;
};

static bool parse_report_options(int argc, char **argv, struct report_request *q)
{
    static const struct option options[] = {{"binary", required_argument, NULL, 'b'},
                                            {"layout", required_argument, NULL, 'l'},
                                            {"type", required_argument, NULL, 't'},
                                            {"format", required_argument, NULL, 'f'},
                                            {"top", required_argument, NULL, 'n'},
                                            {"cacheline", required_argument, NULL, 'c'},
                                            {"no-symbols", no_argument, NULL, 's'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "o:", options, NULL)) != -1) {
        switch (opt) {
        case 'b':
            q->binary = optarg;
            break;
        case 'l':
            q->layout_file = optarg;
            break;
        case 't':
            q->types[q->type_count++] = optarg;
            break;
        case 'f':
            if (!report_format_parse(optarg, &q->format)) {
                fprintf(stderr, "qaudit report: --format wants text, md, json or html, got '%s'\n",
                        optarg);
                return false;
            }
            break;
        case 'o':
            q->output = optarg;
            break;
        case 'n':
            if (!parse_option_number("report", "top", optarg, 1, &q->top))
                return false;
            break;
        case 'c':
            if (!parse_option_number("report", "cacheline", optarg, 1, &q->cacheline))
                return false;
            break;
        case 's':
            q->symbols = false;
            break;
        case 'h':
            fputs(report_usage, stdout);
            exit(0);
        default:
            fputs(report_usage, stderr);
            return false;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "qaudit report: expected at least one DUMP\n%s", report_usage);
        return false;
    }
    if (q->binary && q->layout_file) {
        fprintf(stderr, "qaudit report: give --binary or --layout, not both\n");
        return false;
    }
    return true;
}

/* The layouts to show: the --type names (each must exist), or connection and rxq if present. */
static bool load_layouts(const struct report_request *q, struct layout_set *set,
                         const struct layout_type ***chosen, size_t *count, char *error,
                         size_t size)
{
    *count = 0;
    if (q->binary == NULL && q->layout_file == NULL)
        return true;
    if (q->binary) {
        struct layout_options read = {NULL, false, (const char *const *)q->types, q->type_count};
        if (layout_read(q->binary, &read, set, error, size) != LAYOUT_OK)
            return false;
    } else if (layout_file_read(q->layout_file, set, error, size) != REPORT_OK) {
        return false;
    }
    if (q->type_count > 0)
        return layout_select(set, (const char *const *)q->types, q->type_count, chosen, count,
                             error, size) == REPORT_OK;
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
    return true;
}

int command_report(int argc, char **argv)
{
    struct report_request q = {.format = REPORT_TEXT, .top = 10, .cacheline = 64, .symbols = true};
    q.types = calloc((size_t)argc, sizeof *q.types);
    struct report r = {0};
    struct layout_set set = {0};
    const struct layout_type **layouts = NULL;
    size_t layout_count = 0;
    char error[1024];
    int status = 2;
    FILE *out = stdout;
    if (q.types == NULL || !parse_report_options(argc, argv, &q))
        goto done;
    if (report_load((const char *const *)argv + optind, (size_t)(argc - optind), &r, error,
                    sizeof error) != REPORT_OK ||
        (q.symbols && report_symbolize(&r, q.binary, stderr, error, sizeof error) != REPORT_OK) ||
        !load_layouts(&q, &set, &layouts, &layout_count, error, sizeof error)) {
        fprintf(stderr, "qaudit report: %s\n", error);
        goto done;
    }
    if (q.output != NULL && (out = fopen(q.output, "w")) == NULL) {
        fprintf(stderr, "qaudit report: cannot write %s\n", q.output);
        out = stdout;
        goto done;
    }
    /* A report of tens of thousands of sites is written in many small pieces: buffer them. */
    static char buffer[1 << 20];
    setvbuf(out, buffer, _IOFBF, sizeof buffer);
    struct report_options options = {(unsigned)q.top, (unsigned)q.cacheline, layouts, layout_count,
                                     q.binary ? q.binary : q.layout_file};
    report_render(out, &r, q.format, &options);
    status = report_passed(&r) ? REPORT_OK : REPORT_CHECK_FAILED;
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "qaudit report: cannot write %s\n", q.output);
        status = 2;
    }
    out = stdout;
done:
    if (out != stdout)
        fclose(out);
    free(layouts);
    layout_free(&set);
    report_free(&r);
    free(q.types);
    return status;
}
