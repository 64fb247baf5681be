/* What the allocation gate says: broken rules a line each and a summary for a terminal, GitHub
 * Actions annotations at the site's file and line, JUnit with one testcase per rule. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* GitHub's escaping of workflow commands: data escapes %, CR and LF; properties also : and ,. */
static void github_escaped(FILE *out, const char *s, bool property)
{
    for (; *s; s++) {
        if (*s == '%')
            fputs("%25", out);
        else if (*s == '\r')
            fputs("%0D", out);
        else if (*s == '\n')
            fputs("%0A", out);
        else if (property && *s == ':')
            fputs("%3A", out);
        else if (property && *s == ',')
            fputs("%2C", out);
        else
            fputc(*s, out);
    }
}

void report_alloc_print_github(FILE *out, const struct alloc_gate_report *g)
{
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL)
        cwd[0] = '\0';
    size_t n = strlen(cwd);
    for (size_t i = 0; i < g->count; i++) {
        const struct alloc_rule *rule = &g->rules[i];
        if (rule->verdict == ALLOC_HELD)
            continue;
        fputs(rule->verdict == ALLOC_BROKEN ? "::error " : "::warning ", out);
        if (rule->file != NULL) {
            const char *path = rule->file; /* relative to the checkout, as GitHub wants */
            if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/')
                path += n + 1;
            fputs("file=", out);
            github_escaped(out, path, true);
            if (rule->line > 0)
                fprintf(out, ",line=%u", rule->line);
            fputc(',', out);
        }
        fputs("title=", out);
        github_escaped(out, "qaudit gate (", true);
        github_escaped(out, rule->rule, true);
        fputs(")::", out);
        github_escaped(out, rule->message, false);
        fputc('\n', out);
    }
}

void report_gate_xml(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

bool report_alloc_write_junit(const char *path, const struct alloc_gate_report *g,
                              const char *accept)
{
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return false;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(out,
            "<testsuite name=\"qaudit gate\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
            g->count, g->broken, g->not_applicable);
    for (size_t i = 0; i < g->count; i++) {
        const struct alloc_rule *rule = &g->rules[i];
        fprintf(out, "  <testcase classname=\"");
        report_gate_xml(out, rule->subject);
        fprintf(out, "\" name=\"");
        report_gate_xml(out, rule->rule);
        if (rule->file != NULL) {
            fprintf(out, "\" file=\"");
            report_gate_xml(out, rule->file);
            fprintf(out, "\" line=\"%u", rule->line);
        }
        if (rule->verdict == ALLOC_HELD) {
            fprintf(out, "\"/>\n");
            continue;
        }
        if (rule->verdict == ALLOC_NA) {
            fprintf(out, "\">\n    <skipped message=\"");
            report_gate_xml(out, rule->message);
            fprintf(out, "\"/>\n  </testcase>\n");
            continue;
        }
        fprintf(out, "\">\n    <failure type=\"");
        report_gate_xml(out, rule->rule);
        fprintf(out, "\" message=\"");
        report_gate_xml(out, rule->message);
        fprintf(out, "\">");
        if (accept != NULL) {
            fprintf(out, "to accept this change: ");
            report_gate_xml(out, accept);
        }
        fprintf(out, "</failure>\n  </testcase>\n");
    }
    fprintf(out, "</testsuite>\n");
    return fclose(out) == 0;
}
