/* The CI gate: a baseline of layout rules per type, checked against a binary's DWARF. */
#ifndef PROBE_GATE_H
#define PROBE_GATE_H

#include <stdio.h>

#include "probe/layout.h"

struct gate_finding {
    char *type;    /* the type the rule is about */
    char *rule;    /* "size", "max_class.mimalloc", "offsets.queue", ... */
    char *message; /* one line: "struct connection: size 192 > 184 (+8 B)" */
};

struct gate_report {
    struct gate_finding *broken;
    size_t broken_count;
    size_t types_checked, functions_checked, rules_checked;
    char **type_names; /* every type and function the baseline names, in order */
    size_t type_count;
};

enum gate_status { GATE_PASSED = 0, GATE_BROKEN = 1, GATE_INPUT_ERROR = 2 };

/* Checks every rule of the baseline file against set. GATE_INPUT_ERROR (with one line in error)
 * for a malformed baseline (line and column), an unknown rule, allocator or member, or a type
 * the binary lacks. */
enum gate_status gate_check(const struct layout_set *set, const char *baseline, unsigned cacheline,
                            struct gate_report *report, char *error, size_t error_size);

/* Writes exact rules (size, every allocator's class, every member offset, holes) for the types
 * matching the patterns, and today's code size as max_code_size for each function pattern. */
enum gate_status gate_write_baseline(const struct layout_set *set, char **patterns, size_t n,
                                     char **functions, size_t function_count, const char *path,
                                     char *error, size_t error_size);

void gate_print_text(FILE *out, const struct gate_report *report);
void gate_print_github(FILE *out, const struct gate_report *report);
bool gate_write_junit(const char *path, const struct gate_report *report);
void gate_report_free(struct gate_report *report);

#endif
