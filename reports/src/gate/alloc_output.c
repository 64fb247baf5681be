/* What the allocation gate says: broken rules a line each and a summary for a terminal, GitHub
 * Actions annotations at the site's file and line, JUnit with one testcase per rule. */
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "common/gate_annotations.h"
#include "common/gate_junit.h"
#include "reports_gate.h"

void report_alloc_print_text(FILE *out, const struct alloc_gate_report *g)
{
    for (size_t i = 0; i < g->count; i++)
        if (g->rules[i].verdict == ALLOC_BROKEN)
            fprintf(out, "%s\n", g->rules[i].message);
    fprintf(out, "qaudit gate: %zu allocation rule%s broken, %zu checked, %zu n/a\n", g->broken,
            g->broken == 1 ? "" : "s", g->count, g->not_applicable);
    for (size_t i = 0; i < g->count; i++)
        if (g->rules[i].verdict == ALLOC_NA)
            fprintf(out, "  %s\n", g->rules[i].message);
}

void report_alloc_print_github(FILE *out, const struct alloc_gate_report *g)
{
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL)
        cwd[0] = '\0';
    for (size_t i = 0; i < g->count; i++) {
        const struct alloc_rule *rule = &g->rules[i];
        if (rule->verdict != ALLOC_HELD)
            gate_annotation(out, rule->verdict == ALLOC_BROKEN ? "error" : "warning", rule->file,
                            rule->line, rule->rule, rule->message, cwd);
    }
}

bool report_alloc_write_junit(const char *path, const struct alloc_gate_report *g,
                              const char *accept)
{
    static const enum junit_verdict verdicts[] = {
        [ALLOC_HELD] = JUNIT_PASSED, [ALLOC_BROKEN] = JUNIT_FAILED, [ALLOC_NA] = JUNIT_SKIPPED};
    FILE *out = gate_junit_open(path, g->count, g->broken, g->not_applicable, true);
    if (out == NULL)
        return false;
    for (size_t i = 0; i < g->count; i++) {
        const struct alloc_rule *rule = &g->rules[i];
        struct junit_case c = {rule->subject,           rule->rule,   rule->file, rule->line,
                               verdicts[rule->verdict], rule->message};
        gate_junit_case(out, &c, accept);
    }
    return gate_junit_close(out);
}
