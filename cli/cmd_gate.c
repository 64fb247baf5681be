/* qaudit gate: the CI gate over a baseline of struct rules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "option_parse.h"
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

/* --pin: exact, max or class. */
static bool gate_pin(void *to, char *value)
{
    if (!gate_pin_parse(value, to)) {
        fprintf(stderr, "qaudit gate: --pin wants exact, max or class, got '%s'\n", value);
        return false;
    }
    return true;
}

int command_gate(int argc, char **argv)
{
    const char *baseline = NULL, *write_to = NULL, *format = "text", *junit = NULL;
    const char *debug_file = NULL;
    struct option_list patterns = {calloc((size_t)argc, sizeof(char *)), 0};
    struct option_list functions = {calloc((size_t)argc, sizeof(char *)), 0};
    long cacheline = 64;
    enum gate_pin pin = GATE_PIN_KEEP;
    int operand = 0, status = 0;
    struct layout_set set = {0};
    const struct option_spec specs[] = {
        {"baseline", 0, OPTION_VALUE, OPTION_STRING, &baseline, 0, NULL, "rules to check"},
        {"write-baseline", 0, OPTION_VALUE, OPTION_STRING, &write_to, 0, NULL, "rules to write"},
        {"type", 0, OPTION_VALUE, OPTION_LIST, &patterns, 0, NULL, "a type to pin"},
        {"format", 0, OPTION_VALUE, OPTION_STRING, &format, 0, NULL, "text or github"},
        {"junit", 0, OPTION_VALUE, OPTION_STRING, &junit, 0, NULL, "JUnit XML to"},
        {"cacheline", 0, OPTION_VALUE, OPTION_NUMBER, &cacheline, 1, NULL, "cache-line size"},
        {"debug-file", 0, OPTION_VALUE, OPTION_STRING, &debug_file, 0, NULL, "DWARF from"},
        {"functions", 0, OPTION_VALUE, OPTION_LIST, &functions, 0, NULL, "functions to pin"},
        {"pin", 0, OPTION_VALUE, OPTION_CALL, &pin, 0, gate_pin, "exact, max or class"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {0}};
    const struct option_table table = {"gate", gate_usage, false, specs};
    int parsed = option_parse(&table, argc, argv, &operand);
    if (parsed != OPTIONS_PARSED) {
        status = parsed;
        goto done;
    }
    const char *problem = NULL;
    if (operand != argc - 1)
        problem = "expected one BINARY";
    else if ((baseline == NULL) == (write_to == NULL))
        problem = "give either --baseline FILE or --write-baseline FILE";
    else if (write_to != NULL && patterns.count == 0 && functions.count == 0)
        problem = "--write-baseline needs at least one --type NAME or --functions PATTERN";
    else if (write_to == NULL && functions.count > 0)
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
    if (layout_read_located(argv[operand], &read_options, &set, error, sizeof error) != LAYOUT_OK) {
        fprintf(stderr, "qaudit gate: %s\n", error);
        status = 2;
        goto done;
    }
    if (write_to != NULL) {
        status = gate_write_baseline(&set, patterns.items, patterns.count, functions.items,
                                     functions.count, pin, (unsigned)cacheline, write_to, error,
                                     sizeof error);
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
            char *accept = gate_accept_command(&report, baseline, argv[operand], debug_file);
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
    free(patterns.items);
    free(functions.items);
    return status;
}
