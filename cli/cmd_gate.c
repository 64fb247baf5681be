/* qaudit gate: the CI gate over a baseline of struct rules. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "probe/gate.h"
#include "probe/layout.h"

static const char gate_usage[] =
    "usage: qaudit gate --baseline FILE [--format text|github] [--junit FILE] [--cacheline N]\n"
    "                   [--debug-file FILE] BINARY\n"
    "       qaudit gate --write-baseline FILE [--pin exact|max|class] [--type NAME]...\n"
    "                   [--functions PATTERN]... BINARY\n"
    "  Checks each rule of the baseline (size, max_size, max_class, offsets, members, within,\n"
    "  max_holes, max_code_size) against BINARY's DWARF; prints every broken rule on one line,\n"
    "  naming the member that was added, grew or moved, and the command that accepts the change.\n"
    "  Exit 0: all hold, 1: some rule broke, 2: bad usage or input (a type BINARY lacks, a\n"
    "  malformed baseline, no DWARF).\n"
    "  --write-baseline FILE  write FILE, or update it: the types and functions named are pinned\n"
    "                     again, everything else in it is kept\n"
    "  --pin exact|max|class  what to pin: the whole layout (size, classes, each member's offset\n"
    "                     and size, holes), the maximum size and classes, or only the classes\n"
    "                     (default: as the baseline pins the type already, else exact)\n"
    "  --format github    GitHub Actions annotations at the struct's file and line\n"
    "  --junit FILE       JUnit XML, one testcase per rule\n";

int command_gate(int argc, char **argv)
{
    static const struct option options[] = {{"baseline", required_argument, NULL, 'b'},
                                            {"write-baseline", required_argument, NULL, 'w'},
                                            {"type", required_argument, NULL, 't'},
                                            {"format", required_argument, NULL, 'f'},
                                            {"junit", required_argument, NULL, 'j'},
                                            {"cacheline", required_argument, NULL, 'c'},
                                            {"debug-file", required_argument, NULL, 'd'},
                                            {"functions", required_argument, NULL, 'F'},
                                            {"pin", required_argument, NULL, 'p'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *baseline = NULL, *write_to = NULL, *format = "text", *junit = NULL;
    const char *debug_file = NULL;
    char **patterns = calloc((size_t)argc, sizeof *patterns);
    char **functions = calloc((size_t)argc, sizeof *functions);
    size_t pattern_count = 0, function_count = 0;
    long cacheline = 64;
    enum gate_pin pin = GATE_PIN_KEEP;
    int opt, status = 0;
    struct layout_set set = {0};
    opterr = 0; /* a mistake is said in one line, by option_error */
    while ((opt = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case 'b':
            baseline = optarg;
            break;
        case 'w':
            write_to = optarg;
            break;
        case 't':
            patterns[pattern_count++] = optarg;
            break;
        case 'f':
            format = optarg;
            break;
        case 'j':
            junit = optarg;
            break;
        case 'c':
            if (!parse_option_number("gate", "cacheline", optarg, 1, &cacheline)) {
                status = 2;
                goto done;
            }
            break;
        case 'd':
            debug_file = optarg;
            break;
        case 'F':
            functions[function_count++] = optarg;
            break;
        case 'p':
            if (!gate_pin_parse(optarg, &pin)) {
                fprintf(stderr, "qaudit gate: --pin wants exact, max or class, got '%s'\n", optarg);
                status = 2;
                goto done;
            }
            break;
        case 'h':
            fputs(gate_usage, stdout);
            goto done;
        default:
            option_error("gate", opt, argv, options);
            status = 2;
            goto done;
        }
    }
    const char *problem = NULL;
    if (optind != argc - 1)
        problem = "expected one BINARY";
    else if ((baseline == NULL) == (write_to == NULL))
        problem = "give either --baseline FILE or --write-baseline FILE";
    else if (write_to != NULL && pattern_count == 0 && function_count == 0)
        problem = "--write-baseline needs at least one --type NAME or --functions PATTERN";
    else if (write_to == NULL && function_count > 0)
        problem = "--functions goes with --write-baseline (a baseline's \"functions\" are checked)";
    else if (write_to == NULL && pin != GATE_PIN_KEEP)
        problem = "--pin goes with --write-baseline";
    else if (strcmp(format, "text") != 0 && strcmp(format, "github") != 0)
        problem = "--format wants text or github";
    if (problem != NULL) {
        status = usage_error("gate", problem);
        goto done;
    }
    char error[512];
    struct layout_options read_options = {debug_file, false, NULL, 0};
    if (layout_read_located(argv[optind], &read_options, &set, error, sizeof error) != LAYOUT_OK) {
        fprintf(stderr, "qaudit gate: %s\n", error);
        status = 2;
        goto done;
    }
    if (write_to != NULL) {
        status = gate_write_baseline(&set, patterns, pattern_count, functions, function_count, pin,
                                     (unsigned)cacheline, write_to, error, sizeof error);
        if (status != GATE_PASSED)
            fprintf(stderr, "qaudit gate: %s\n", error);
        else
            printf("qaudit gate: wrote %s\n", write_to);
    } else {
        struct gate_report report;
        status = gate_check(&set, baseline, (unsigned)cacheline, &report, error, sizeof error);
        if (status == GATE_INPUT_ERROR) {
            fprintf(stderr, "qaudit gate: %s\n", error);
        } else {
            char *accept = gate_accept_command(&report, baseline, argv[optind], debug_file);
            if (format[0] == 'g')
                gate_print_github(stdout, &report, accept);
            else
                gate_print_text(stdout, &report, accept);
            if (junit != NULL && !gate_write_junit(junit, &report, accept)) {
                fprintf(stderr, "qaudit gate: cannot write %s: %s\n", junit, strerror(errno));
                status = GATE_INPUT_ERROR;
            }
            free(accept);
        }
        gate_report_free(&report);
    }
done:
    layout_free(&set);
    free(patterns);
    free(functions);
    return status;
}
