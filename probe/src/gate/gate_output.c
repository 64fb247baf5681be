/* What the gate says: text for a terminal, GitHub Actions annotations at the struct's file and
 * line, JUnit with one testcase per rule, and the command that accepts a change. */
#include "probe/gate.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/gate_annotations.h"
#include "common/gate_junit.h"
#include "common/shell_words.h"

/* True when rule i is the first broken rule of its type or function. */
static bool first_broken_of(const struct gate_report *r, size_t i)
{
    if (r->rules[i].message == NULL)
        return false;
    for (size_t j = 0; j < i; j++)
        if (r->rules[j].message != NULL && r->rules[j].is_function == r->rules[i].is_function &&
            strcmp(r->rules[j].type, r->rules[i].type) == 0)
            return false;
    return true;
}

char *gate_accept_command(const struct gate_report *r, const char *baseline, const char *binary,
                          const char *debug_file)
{
    if (r->broken_count == 0)
        return NULL;
    char *line = NULL;
    size_t len = 0;
    bool ok = shell_word_append(&line, &len, "qaudit") && shell_word_append(&line, &len, "gate") &&
              shell_word_append(&line, &len, "--write-baseline") &&
              shell_word_append(&line, &len, baseline);
    if (ok && debug_file != NULL)
        ok = shell_word_append(&line, &len, "--debug-file") &&
             shell_word_append(&line, &len, debug_file);
    for (size_t i = 0; i < r->rule_count && ok; i++)
        if (first_broken_of(r, i))
            ok = shell_word_append(&line, &len,
                                   r->rules[i].is_function ? "--functions" : "--type") &&
                 shell_word_append(&line, &len, r->rules[i].type);
    if (ok && shell_word_append(&line, &len, binary))
        return line;
    free(line);
    return NULL;
}

void gate_print_text(FILE *out, const struct gate_report *r, const char *accept)
{
    for (size_t i = 0; i < r->rule_count; i++)
        if (r->rules[i].message != NULL)
            fprintf(out, "%s\n", r->rules[i].message);
    fprintf(out, "qaudit gate: %zu rule%s broken, %zu checked, %zu type%s", r->broken_count,
            r->broken_count == 1 ? "" : "s", r->rule_count, r->types_checked,
            r->types_checked == 1 ? "" : "s");
    if (r->functions_checked > 0)
        fprintf(out, ", %zu function%s", r->functions_checked,
                r->functions_checked == 1 ? "" : "s");
    fputc('\n', out);
    if (accept != NULL)
        fprintf(out, "to accept this change: %s\n", accept);
}

void gate_print_github(FILE *out, const struct gate_report *r, const char *accept)
{
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL)
        cwd[0] = '\0';
    for (size_t i = 0; i < r->rule_count; i++) {
        const struct gate_rule *rule = &r->rules[i];
        if (rule->message != NULL)
            gate_annotation(out, "error", rule->file, rule->line, rule->rule, rule->message, cwd);
    }
    if (accept != NULL)
        gate_annotation_accept(out, accept);
}

bool gate_write_junit(const char *path, const struct gate_report *r, const char *accept)
{
    FILE *out = gate_junit_open(path, r->rule_count, r->broken_count, 0, false);
    if (out == NULL)
        return false;
    for (size_t i = 0; i < r->rule_count; i++) {
        const struct gate_rule *rule = &r->rules[i];
        struct junit_case c = {rule->type,
                               rule->rule,
                               rule->file,
                               rule->line,
                               rule->message ? JUNIT_FAILED : JUNIT_PASSED,
                               rule->message};
        gate_junit_case(out, &c, accept);
    }
    return gate_junit_close(out);
}
