/* qaudit compare: builds side by side (layouts from DWARF, depth-one figures from dumps). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reports/compare.h"

static const char compare_usage[] =
    "usage: qaudit compare BINARY [--dump DUMP] [BINARY [--dump DUMP]]... [--format text|md|json]\n"
    "                      [--connection TYPE] [--queue-member NAME]\n"
    "  Each BINARY is one build; the --dump after it is a qaudit-alloc/1 dump of a run of it.\n"
    "  Figures: queue object, connection object, allocator classes of the connection, and with\n"
    "  a dump, allocations and extra heap bytes per connection at depth one. The text has a\n"
    "  column per build and fits 100 columns (builds wrap into several tables); md and json\n"
    "  have a row per build with every column.\n"
    "  --connection TYPE    the connection struct (default connection)\n"
    "  --queue-member NAME  its queue member (default queue)\n";

/* Options may come anywhere; --dump belongs to the BINARY before it. */
static bool parse_compare(int argc, char **argv, struct compare_build *builds, size_t *count,
                          struct compare_options *o, enum report_format *format)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool takes_value = strcmp(arg, "--dump") == 0 || strcmp(arg, "--format") == 0 ||
                           strcmp(arg, "--connection") == 0 || strcmp(arg, "--queue-member") == 0;
        if (takes_value && i + 1 >= argc) {
            fprintf(stderr, "qaudit compare: %s wants a value\n", arg);
            return false;
        }
        if (strcmp(arg, "--dump") == 0) {
            if (*count == 0 || builds[*count - 1].dump != NULL) {
                fprintf(stderr, "qaudit compare: --dump %s must follow its BINARY\n", argv[i + 1]);
                return false;
            }
            builds[*count - 1].dump = argv[++i];
        } else if (strcmp(arg, "--format") == 0) {
            if (!report_format_parse(argv[++i], format) ||
                (*format != REPORT_TEXT && *format != REPORT_MARKDOWN && *format != REPORT_JSON)) {
                fprintf(stderr, "qaudit compare: --format wants text, md or json\n");
                return false;
            }
        } else if (strcmp(arg, "--connection") == 0) {
            o->connection_type = argv[++i];
        } else if (strcmp(arg, "--queue-member") == 0) {
            o->queue_member = argv[++i];
        } else if (arg[0] == '-') {
            static const struct option options[] = {{"dump", required_argument, NULL, 0},
                                                    {"format", required_argument, NULL, 0},
                                                    {"connection", required_argument, NULL, 0},
                                                    {"queue-member", required_argument, NULL, 0},
                                                    {"help", no_argument, NULL, 0},
                                                    {NULL, 0, NULL, 0}};
            optind = i + 1; /* option_error names argv[optind - 1] */
            optopt = arg[1];
            option_error("compare", '?', argv, options);
            return false;
        } else {
            builds[(*count)++] = (struct compare_build){arg, NULL};
        }
    }
    if (*count == 0) {
        usage_error("compare", "expected at least one BINARY");
        return false;
    }
    return true;
}

int command_compare(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0) {
            fputs(compare_usage, stdout);
            return 0;
        }
    struct compare_build *builds = calloc((size_t)argc, sizeof *builds);
    struct compare_row *rows = calloc((size_t)argc, sizeof *rows);
    struct compare_options options = {NULL, NULL};
    enum report_format format = REPORT_TEXT;
    size_t count = 0;
    char error[1024];
    int status = 2;
    if (builds != NULL && rows != NULL &&
        parse_compare(argc, argv, builds, &count, &options, &format)) {
        if (compare_builds(builds, count, &options, rows, error, sizeof error) == REPORT_OK) {
            compare_render(stdout, rows, count, &options, format);
            status = 0;
        } else {
            fprintf(stderr, "qaudit compare: %s\n", error);
        }
    }
    if (rows != NULL)
        compare_rows_free(rows, count);
    free(rows);
    free(builds);
    return status;
}
