/* The allocation half of the CI gate (issue 42): a run's allocations written as rules into the
 * baseline file beside the struct rules ("allocations"), and a later run checked against them.
 * Sites match by the functions of their frames, as qaudit diff matches them, so another build
 * still matches. Flow figures (allocations, bytes, temporaries) are per unit of work when the
 * baseline says so (--per N), the queue audit's per connection; peak live bytes and blocks live
 * at exit are the run's own. reports/src/gate/ (docs/design.md, "The allocation gate"). */
#ifndef REPORTS_ALLOC_GATE_H
#define REPORTS_ALLOC_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "reports/report.h"

enum alloc_verdict { ALLOC_HELD, ALLOC_BROKEN, ALLOC_NA };

/* One rule checked: held, broken (message: the line that says what broke) or n/a (message:
 * why it could not apply). */
struct alloc_rule {
    char *subject; /* the site, "function (file:line)", or "run" or "queue" */
    char *rule;    /* "allocs", "bytes", "temporary", "live_blocks", "new_site", "totals.allocs",
                      "queue.allocs_per_connection.1", "queue.depth_one_no_alloc", ... */
    char *message;
    char *file; /* the site's source file, or NULL */
    unsigned line;
    enum alloc_verdict verdict;
};

struct alloc_gate_report {
    struct alloc_rule *rules;
    size_t count, capacity, broken, not_applicable;
};

/* What the command line adds to the baseline's own settings: the run's units of work (0: none
 * given) and a tolerance (a fraction; negative: none given). */
struct alloc_gate_settings {
    double per;
    double tolerance;
};

/* "5%" or "0.5%" -> 0.05, 0.005; false for anything else (a negative or non-finite figure). */
bool report_alloc_tolerance_parse(const char *text, double *out);

/* What a baseline file holds: struct rules ("types" or "functions") and allocation rules. False
 * with one line in error when it cannot be read or is no qaudit-baseline/1 file; a missing file
 * holds nothing (true). */
bool report_alloc_baseline_halves(const char *path, bool *structs, bool *allocations, char *error,
                                  size_t size);

/* Writes r's figures (loaded, symbolized, folded) as the "allocations" of path, creating it or
 * keeping everything else it holds. settings->per: the run's units of work (0: flow figures are
 * the run's own); a tolerance given is kept as the file's default. */
bool report_alloc_baseline_write(const struct report *r, const char *path,
                                 const struct alloc_gate_settings *settings, char *error,
                                 size_t size);

/* Checks r against path's allocation rules. REPORT_INPUT_ERROR with one line in error for a
 * baseline without them or malformed, dumps of another program, or --per missing where the
 * baseline's figures are per unit of work (or given where they are not); else
 * REPORT_CHECK_FAILED when a rule broke, REPORT_OK when none did. */
enum report_status report_alloc_check(const struct report *r, const char *path,
                                      const struct alloc_gate_settings *settings,
                                      struct alloc_gate_report *out, char *error, size_t size);
void report_alloc_gate_free(struct alloc_gate_report *g);

/* Each broken rule on a line, then "qaudit gate: N allocation rules broken, M checked, K n/a",
 * each n/a rule's reason under it. */
void report_alloc_print_text(FILE *out, const struct alloc_gate_report *g);
/* GitHub Actions: "::error file=F,line=N,title=qaudit gate (RULE)::message" per broken rule,
 * "::warning" per n/a one. */
void report_alloc_print_github(FILE *out, const struct alloc_gate_report *g);
/* JUnit XML at path: one testcase per rule (classname the subject, name the rule), a failure
 * per broken one carrying accept, <skipped/> per n/a one. */
bool report_alloc_write_junit(const char *path, const struct alloc_gate_report *g,
                              const char *accept);
/* Adds a rule (the struct half's, when both halves go into one JUnit file); false when memory
 * ran out. message: NULL for a rule that held. */
bool report_alloc_rule_add(struct alloc_gate_report *g, const char *subject, const char *rule,
                           const char *message, const char *file, unsigned line,
                           enum alloc_verdict verdict);

#endif
