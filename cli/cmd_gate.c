/* qaudit gate: the CI gate over a baseline of struct rules and, with --dump, of allocation rules
 * (gate_alloc.c): one file and one command for both halves. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gate_alloc.h"
#include "option_parse.h"
#include "probe/gate.h"
#include "probe/layout.h"
#include "reports/alloc_gate.h"

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
    "  --junit FILE       JUnit XML, one testcase per rule\n"
    "       qaudit gate --baseline FILE --dump DUMP... [--binary B] [--per N] [--tolerance P%]\n"
    "                   [--format text|github] [--junit FILE] [BINARY]\n"
    "       qaudit gate --write-baseline FILE --dump DUMP... [--binary B] [--per N] [BINARY]\n"
    "  Allocation rules, beside the struct rules in the same FILE: per site (matched by its\n"
    "  functions, as qaudit diff matches them) allocations, bytes, temporaries and blocks live at\n"
    "  exit; the run's totals and peak live bytes; the queue audit's allocations per connection\n"
    "  by peak depth and its depth-one check. A new allocating site breaks a rule; a rule the\n"
    "  dumps cannot speak to is n/a. With BINARY and struct rules in FILE both halves are "
    "checked.\n"
    "  Exit 2 for dumps that cannot be compared (another program, unreadable, not a dump).\n"
    "  --dump DUMP        a dump, a directory or a quoted glob of dumps (repeatable)\n"
    "  --binary B         the program's file for symbols (default: BINARY)\n"
    "  --per N            the units of work the run did (requests, iterations): allocations,\n"
    "                     bytes and temporaries per unit, so that a longer run still compares\n"
    "  --tolerance P%     how far a figure may grow (default: the file's \"tolerance\", else 0%;\n"
    "                     a rule's own \"tolerance\" wins; none for the queue at depth one)\n";

/* --pin: exact, max or class. */
static bool gate_pin(void *to, char *value)
{
    if (!gate_pin_parse(value, to)) {
        fprintf(stderr, "qaudit gate: --pin wants exact, max or class, got '%s'\n", value);
        return false;
    }
    return true;
}

/* --per N: a positive number of units of work. */
static bool gate_per(void *to, char *value)
{
    struct gate_alloc_request *q = to;
    char *end;
    double per = strtod(value, &end);
    if (end == value || *end != '\0' || !(per > 0) || per > 1e18) {
        fprintf(stderr, "qaudit gate: --per wants a positive number of units of work, got '%s'\n",
                value);
        return false;
    }
    q->per = per;
    q->per_text = value;
    return true;
}

/* --tolerance P%. */
static bool gate_tolerance(void *to, char *value)
{
    if (!report_alloc_tolerance_parse(value, to)) {
        fprintf(stderr, "qaudit gate: --tolerance wants a percentage such as 5%%, got '%s'\n",
                value);
        return false;
    }
    return true;
}

/* What the command was asked. */
struct gate_request {
    const char *baseline, *write_to, *format, *junit, *debug_file;
    struct option_list patterns, functions, dumps;
    long cacheline;
    enum gate_pin pin;
    struct gate_alloc_request alloc;
    const char *binary; /* BINARY, or NULL (allowed with --dump) */
};

/* The one line a mistaken request gets, or NULL. */
static const char *gate_problem(const struct gate_request *q, int operands)
{
    bool alloc = q->dumps.count > 0, structs = q->patterns.count + q->functions.count > 0;
    if (!alloc && operands != 1)
        return "expected one BINARY";
    if (alloc && operands > 1)
        return "expected at most one BINARY";
    if ((q->baseline == NULL) == (q->write_to == NULL))
        return "give either --baseline FILE or --write-baseline FILE";
    if (q->write_to != NULL && !structs && !alloc)
        return "--write-baseline needs at least one --type NAME or --functions PATTERN";
    if (q->write_to != NULL && structs && operands == 0)
        return "--type and --functions pin BINARY's layouts: give BINARY";
    if (q->write_to == NULL && q->functions.count > 0)
        return "--functions goes with --write-baseline (a baseline's \"functions\" are checked)";
    if (q->write_to == NULL && q->pin != GATE_PIN_KEEP)
        return "--pin goes with --write-baseline";
    if (strcmp(q->format, "text") != 0 && strcmp(q->format, "github") != 0)
        return "--format wants text or github";
    if (!alloc && (q->alloc.binary != NULL || q->alloc.per > 0 || q->alloc.tolerance >= 0))
        return "--binary, --per and --tolerance go with --dump DUMP (the allocation rules)";
    return NULL;
}

/* The struct half: BINARY's layouts checked, or pinned into the baseline. */
static int gate_structs(const struct gate_request *q, struct layout_set *set,
                        struct gate_report *report, char **accept)
{
    char error[512];
    struct layout_options read_options = {q->debug_file, false, NULL, 0};
    if (layout_read_located(q->binary, &read_options, set, error, sizeof error) != LAYOUT_OK) {
        fprintf(stderr, "qaudit gate: %s\n", error);
        return 2;
    }
    int status;
    if (q->write_to != NULL) {
        status = gate_write_baseline(set, q->patterns.items, q->patterns.count, q->functions.items,
                                     q->functions.count, q->pin, (unsigned)q->cacheline,
                                     q->write_to, error, sizeof error);
        if (status != GATE_PASSED)
            fprintf(stderr, "qaudit gate: %s\n", error);
        return status;
    }
    status = gate_check(set, q->baseline, (unsigned)q->cacheline, report, error, sizeof error);
    if (status == GATE_INPUT_ERROR)
        fprintf(stderr, "qaudit gate: %s\n", error);
    else
        *accept = gate_accept_command(report, q->baseline, q->binary, q->debug_file);
    return status;
}

/* The struct half's verdict said on its own (no --dump), as before issue 42; a note on stderr
 * when the baseline also holds allocation rules, which need dumps. */
static int say_structs(const struct gate_request *q, struct gate_report *report, const char *accept)
{
    int status = report->broken_count > 0 ? GATE_BROKEN : GATE_PASSED;
    if (q->format[0] == 'g')
        gate_print_github(stdout, report, accept);
    else
        gate_print_text(stdout, report, accept);
    if (q->junit != NULL && !gate_write_junit(q->junit, report, accept)) {
        fprintf(stderr, "qaudit gate: cannot write %s: %s\n", q->junit, strerror(errno));
        status = GATE_INPUT_ERROR;
    }
    bool structs, allocations;
    char error[512];
    if (report_alloc_baseline_halves(q->baseline, &structs, &allocations, error, sizeof error) &&
        allocations)
        fprintf(stderr,
                "qaudit gate: %s's allocation rules were not checked: give the run's "
                "dumps with --dump DUMP\n",
                q->baseline);
    return status;
}

/* Both halves as asked: the struct half when BINARY is given and (checking) the baseline holds
 * struct rules or no dumps are given; the allocation half with --dump. */
static int gate_run(struct gate_request *q)
{
    bool alloc = q->dumps.count > 0, structs = q->binary != NULL, has_allocations = false;
    char error[512];
    if (alloc && q->baseline != NULL &&
        !report_alloc_baseline_halves(q->baseline, &structs, &has_allocations, error,
                                      sizeof error)) {
        fprintf(stderr, "qaudit gate: %s\n", error);
        return 2;
    }
    if (q->write_to != NULL)
        structs = q->patterns.count + q->functions.count > 0;
    if (alloc && q->baseline != NULL && structs && q->binary == NULL)
        fprintf(stderr,
                "qaudit gate: %s's struct rules were not checked: give BINARY after the "
                "options\n",
                q->baseline);
    structs = structs && q->binary != NULL;
    struct layout_set set = {0};
    struct gate_report report = {0};
    char *accept = NULL;
    int status = 0;
    if (structs)
        status = gate_structs(q, &set, &report, &accept);
    if (status != GATE_INPUT_ERROR && q->write_to != NULL && alloc)
        status = gate_alloc_write(&q->alloc, q->write_to);
    if (status != GATE_INPUT_ERROR && q->write_to != NULL)
        printf("qaudit gate: wrote %s\n", q->write_to);
    if (status != GATE_INPUT_ERROR && q->baseline != NULL) {
        if (!alloc) {
            status = say_structs(q, &report, accept);
        } else {
            int checked = gate_alloc_check(&q->alloc, structs ? &report : NULL, accept);
            status = checked == 2 ? 2 : (checked || status);
        }
    }
    free(accept);
    gate_report_free(&report);
    layout_free(&set);
    return status;
}

int command_gate(int argc, char **argv)
{
    struct gate_request q = {.format = "text", .cacheline = 64, .pin = GATE_PIN_KEEP};
    q.patterns = (struct option_list){calloc((size_t)argc, sizeof(char *)), 0};
    q.functions = (struct option_list){calloc((size_t)argc, sizeof(char *)), 0};
    q.dumps = (struct option_list){calloc((size_t)argc, sizeof(char *)), 0};
    q.alloc.tolerance = -1;
    int operand = 0, status = 0;
    const struct option_spec specs[] = {
        {"baseline", 0, OPTION_VALUE, OPTION_STRING, &q.baseline, 0, NULL, "rules to check"},
        {"write-baseline", 0, OPTION_VALUE, OPTION_STRING, &q.write_to, 0, NULL, "rules to write"},
        {"type", 0, OPTION_VALUE, OPTION_LIST, &q.patterns, 0, NULL, "a type to pin"},
        {"format", 0, OPTION_VALUE, OPTION_STRING, &q.format, 0, NULL, "text or github"},
        {"junit", 0, OPTION_VALUE, OPTION_STRING, &q.junit, 0, NULL, "JUnit XML to"},
        {"cacheline", 0, OPTION_VALUE, OPTION_NUMBER, &q.cacheline, 1, NULL, "cache-line size"},
        {"debug-file", 0, OPTION_VALUE, OPTION_STRING, &q.debug_file, 0, NULL, "DWARF from"},
        {"functions", 0, OPTION_VALUE, OPTION_LIST, &q.functions, 0, NULL, "functions to pin"},
        {"pin", 0, OPTION_VALUE, OPTION_CALL, &q.pin, 0, gate_pin, "exact, max or class"},
        {"dump", 0, OPTION_VALUE, OPTION_LIST, &q.dumps, 0, NULL, "a run's dumps"},
        {"binary", 0, OPTION_VALUE, OPTION_STRING, &q.alloc.binary, 0, NULL, "symbols from"},
        {"per", 0, OPTION_VALUE, OPTION_CALL, &q.alloc, 0, gate_per, "units of work"},
        {"tolerance", 0, OPTION_VALUE, OPTION_CALL, &q.alloc.tolerance, 0, gate_tolerance,
         "growth allowed"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {0}};
    const struct option_table table = {"gate", gate_usage, false, specs};
    int parsed = option_parse(&table, argc, argv, &operand);
    const char *problem = parsed == OPTIONS_PARSED ? gate_problem(&q, argc - operand) : NULL;
    if (parsed != OPTIONS_PARSED) {
        status = parsed;
    } else if (problem != NULL) {
        status = usage_error("gate", problem);
    } else {
        q.binary = operand < argc ? argv[operand] : NULL;
        q.alloc.baseline = q.baseline ? q.baseline : q.write_to;
        q.alloc.dumps = q.dumps.items;
        q.alloc.dump_count = q.dumps.count;
        if (q.alloc.binary == NULL)
            q.alloc.binary = q.binary;
        q.alloc.github = q.format[0] == 'g';
        q.alloc.junit = q.junit;
        status = gate_run(&q);
    }
    free(q.patterns.items);
    free(q.functions.items);
    free(q.dumps.items);
    return status;
}
