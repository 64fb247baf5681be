/* What the gate says: text for a terminal, GitHub Actions annotations at the struct's file and
 * line, JUnit with one testcase per rule, and the command that accepts a change. */
#include "probe/gate.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe/layout_render.h"

/* Appends s to a growing string, single-quoted for a POSIX shell when it needs to be. */
static bool append_word(char **line, size_t *len, const char *s)
{
    bool plain = s[0] != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+-",
                       *p) != NULL;
    size_t need = *len + 4 * strlen(s) + 4;
    char *grown = realloc(*line, need);
    if (grown == NULL)
        return false;
    *line = grown;
    char *out = *line + *len;
    if (*len > 0)
        *out++ = ' ';
    if (!plain)
        *out++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'' && !plain) {
            memcpy(out, "'\\''", 4);
            out += 4;
        } else {
            *out++ = *p;
        }
    }
    if (!plain)
        *out++ = '\'';
    *out = '\0';
    *len = (size_t)(out - *line);
    return true;
}

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
    bool ok = append_word(&line, &len, "qaudit") && append_word(&line, &len, "gate") &&
              append_word(&line, &len, "--write-baseline") && append_word(&line, &len, baseline);
    if (ok && debug_file != NULL)
        ok = append_word(&line, &len, "--debug-file") && append_word(&line, &len, debug_file);
    for (size_t i = 0; i < r->rule_count && ok; i++)
        if (first_broken_of(r, i))
            ok = append_word(&line, &len, r->rules[i].is_function ? "--functions" : "--type") &&
                 append_word(&line, &len, r->rules[i].type);
    if (ok && append_word(&line, &len, binary))
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

/* A path under the working directory relative to it, as GitHub wants (checkouts are the
 * working directory of a job); others as they are. */
static const char *workspace_path(const char *path, const char *cwd)
{
    size_t n = strlen(cwd);
    if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

void gate_print_github(FILE *out, const struct gate_report *r, const char *accept)
{
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL)
        cwd[0] = '\0';
    for (size_t i = 0; i < r->rule_count; i++) {
        const struct gate_rule *rule = &r->rules[i];
        if (rule->message == NULL)
            continue;
        fputs("::error ", out);
        if (rule->file != NULL) {
            fputs("file=", out);
            github_escaped(out, workspace_path(rule->file, cwd), true);
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
    if (accept != NULL) {
        fputs("::notice title=qaudit gate::to accept this change: ", out);
        github_escaped(out, accept, false);
        fputc('\n', out);
    }
}

bool gate_write_junit(const char *path, const struct gate_report *r, const char *accept)
{
    FILE *out = fopen(path, "w");
    if (out == NULL)
        return false;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(out, "<testsuite name=\"qaudit gate\" tests=\"%zu\" failures=\"%zu\">\n", r->rule_count,
            r->broken_count);
    for (size_t i = 0; i < r->rule_count; i++) {
        const struct gate_rule *rule = &r->rules[i];
        fprintf(out, "  <testcase classname=\"");
        probe_xml_escape(out, rule->type);
        fprintf(out, "\" name=\"");
        probe_xml_escape(out, rule->rule);
        if (rule->file != NULL) {
            fprintf(out, "\" file=\"");
            probe_xml_escape(out, rule->file);
            fprintf(out, "\" line=\"%u", rule->line);
        }
        if (rule->message == NULL) {
            fprintf(out, "\"/>\n");
            continue;
        }
        fprintf(out, "\">\n    <failure type=\"");
        probe_xml_escape(out, rule->rule);
        fprintf(out, "\" message=\"");
        probe_xml_escape(out, rule->message);
        fprintf(out, "\">");
        if (accept != NULL) {
            fprintf(out, "to accept this change: ");
            probe_xml_escape(out, accept);
        }
        fprintf(out, "</failure>\n  </testcase>\n");
    }
    fprintf(out, "</testsuite>\n");
    return fclose(out) == 0;
}
