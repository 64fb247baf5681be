/* The CI gate: a baseline of layout rules per type, checked against a binary's DWARF; written
 * (or updated) from today's layouts at one of three strengths. */
#ifndef PROBE_GATE_H
#define PROBE_GATE_H

#include <stdio.h>

#include "probe/layout.h"

/* One rule checked: every rule of the baseline gives one, held or broken. */
struct gate_rule {
    char *type;       /* the type, or the function pattern, the rule is about */
    char *rule;       /* "size", "max_class.mimalloc", "offsets.queue", "members.queue", ... */
    char *message;    /* NULL when the rule holds, else one line: "struct connection: size 232 !=
                         184 (+48 B): queue grew 32 -> 80 B" */
    char *file;       /* where the type is defined (DW_AT_decl_file), or NULL */
    unsigned line;    /* DW_AT_decl_line, 0 when unknown */
    bool is_function; /* a max_code_size rule */
};

struct gate_report {
    struct gate_rule *rules;
    size_t rule_count, rule_capacity, broken_count;
    size_t types_checked, functions_checked;
};

enum gate_status { GATE_PASSED = 0, GATE_BROKEN = 1, GATE_INPUT_ERROR = 2 };

/* How much of today's layout --write-baseline pins: the whole layout (size, classes, every
 * member's offset and size, holes), only the maximum size and the allocator classes, or only
 * the classes. GATE_PIN_KEEP re-pins a type as its baseline entry says ("pin"), refreshes a
 * hand-written entry's own rules, and pins a new type exactly. */
enum gate_pin { GATE_PIN_KEEP = 0, GATE_PIN_EXACT, GATE_PIN_MAX, GATE_PIN_CLASS };

/* "exact", "max" or "class" -> the pin; false for another word. */
bool gate_pin_parse(const char *word, enum gate_pin *pin);

/* Checks every rule of the baseline file against set. GATE_INPUT_ERROR (with one line in error)
 * for a malformed baseline (line and column), an unknown rule, pin or allocator, or a type the
 * binary lacks. */
enum gate_status gate_check(const struct layout_set *set, const char *baseline, unsigned cacheline,
                            struct gate_report *report, char *error, size_t error_size);

/* Writes path, or updates it when it is already a baseline (the entries not named are kept):
 * rules for the types matching the patterns (see enum gate_pin; cacheline for a refreshed
 * "within"), and today's code size as max_code_size for each function pattern. */
enum gate_status gate_write_baseline(const struct layout_set *set, char **patterns, size_t n,
                                     char **functions, size_t function_count, enum gate_pin pin,
                                     unsigned cacheline, const char *path, char *error,
                                     size_t error_size);

/* The command that accepts the broken rules of report into baseline (a malloc'd line:
 * "qaudit gate --write-baseline FILE --type connection BINARY"), or NULL when none broke. */
char *gate_accept_command(const struct gate_report *report, const char *baseline,
                          const char *binary, const char *debug_file);

/* Each broken rule on a line, a summary, and the accept command (when not NULL). */
void gate_print_text(FILE *out, const struct gate_report *report, const char *accept);
/* GitHub Actions annotations: "::error file=F,line=N,title=...::message" per broken rule (paths
 * under the working directory made relative to it), the accept command as a notice. */
void gate_print_github(FILE *out, const struct gate_report *report, const char *accept);
/* JUnit XML: one testcase per rule (classname the type, name the rule), a failure per broken
 * one carrying the accept command. */
bool gate_write_junit(const char *path, const struct gate_report *report, const char *accept);
void gate_report_free(struct gate_report *report);

#endif
