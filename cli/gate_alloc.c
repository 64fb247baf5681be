/* qaudit gate's allocation half (issue 42): the dumps given with --dump loaded as qaudit report
 * loads them, written as the baseline's allocation rules or checked against them, and said
 * beside the struct half's rules (text, GitHub annotations, one JUnit file for both). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/gate_annotations.h"
#include "common/shell_words.h"
#include "gate_alloc.h"
#include "probe/gate.h"
#include "reports/alloc_gate.h"
#include "reports/report.h"

/* The dumps of every --dump (a dump, a directory or a glob), read, symbolized with binary and
 * folded, into r; false after one line on stderr. */
static bool load_dumps(const struct gate_alloc_request *q, struct report *r)
{
    struct dump_list list = {0};
    char error[1024];
    struct report_load_settings load = {
        .binary = q->binary, .symbols = true, .skip_defaults = true};
    struct dump_filter all = {0};
    bool ok = q->dump_count > 0;
    if (!ok)
        snprintf(error, sizeof error, "--dump: no dumps given");
    for (size_t i = 0; ok && i < q->dump_count; i++)
        ok = expand_dumps(q->dumps[i], &list, error, sizeof error);
    ok = ok && dump_list_pick(&list, &all, "gate", error, sizeof error) &&
         report_load_ready((const char *const *)list.paths, list.count, &load, r, error,
                           sizeof error);
    if (!ok)
        fprintf(stderr, "qaudit gate: %s\n", error);
    dump_list_free(&list);
    return ok;
}

/* "qaudit gate --write-baseline FILE --dump D... [--binary B] [--per N]": the command that
 * writes today's run as the rules. */
static char *accept_command(const struct gate_alloc_request *q)
{
    char *line = NULL;
    size_t len = 0;
    bool ok = shell_word_append(&line, &len, "qaudit") && shell_word_append(&line, &len, "gate") &&
              shell_word_append(&line, &len, "--write-baseline") &&
              shell_word_append(&line, &len, q->baseline);
    for (size_t i = 0; ok && i < q->dump_count; i++)
        ok =
            shell_word_append(&line, &len, "--dump") && shell_word_append(&line, &len, q->dumps[i]);
    if (ok && q->binary != NULL)
        ok =
            shell_word_append(&line, &len, "--binary") && shell_word_append(&line, &len, q->binary);
    if (ok && q->per_text != NULL)
        ok = shell_word_append(&line, &len, "--per") && shell_word_append(&line, &len, q->per_text);
    if (ok)
        return line;
    free(line);
    return NULL;
}

int gate_alloc_write(const struct gate_alloc_request *q, const char *path)
{
    struct report r = {0};
    char error[1024];
    int status = 2;
    struct alloc_gate_settings settings = {q->per, q->tolerance};
    if (load_dumps(q, &r)) {
        if (!report_alloc_baseline_write(&r, path, &settings, error, sizeof error))
            fprintf(stderr, "qaudit gate: %s\n", error);
        else
            status = 0;
    }
    report_free(&r);
    return status;
}

/* The struct half's rules as rules of g (one JUnit file holds both halves). */
static void add_struct_rules(struct alloc_gate_report *g, const struct gate_report *s)
{
    for (size_t i = 0; i < s->rule_count; i++) {
        const struct gate_rule *rule = &s->rules[i];
        report_alloc_rule_add(g, rule->type, rule->rule, rule->message, rule->file, rule->line,
                              rule->message ? ALLOC_BROKEN : ALLOC_HELD);
    }
}

int gate_alloc_check(const struct gate_alloc_request *q, const struct gate_report *structs,
                     const char *struct_accept)
{
    struct report r = {0};
    struct alloc_gate_report g = {0};
    char error[1024];
    struct alloc_gate_settings settings = {q->per, q->tolerance};
    int status = 2;
    if (!load_dumps(q, &r))
        goto done;
    enum report_status checked =
        report_alloc_check(&r, q->baseline, &settings, &g, error, sizeof error);
    if (checked == REPORT_INPUT_ERROR) {
        fprintf(stderr, "qaudit gate: %s\n", error);
        goto done;
    }
    status = checked == REPORT_CHECK_FAILED ? 1 : 0;
    char *accept = g.broken > 0 ? accept_command(q) : NULL;
    if (q->github) {
        if (structs != NULL)
            gate_print_github(stdout, structs, struct_accept);
        report_alloc_print_github(stdout, &g);
        if (accept != NULL)
            gate_annotation_accept(stdout, accept);
    } else {
        if (structs != NULL)
            gate_print_text(stdout, structs, struct_accept);
        report_alloc_print_text(stdout, &g);
        if (accept != NULL)
            printf("to accept this change: %s\n", accept);
    }
    if (q->junit != NULL) {
        struct alloc_gate_report all = {0};
        if (structs != NULL)
            add_struct_rules(&all, structs);
        for (size_t i = 0; i < g.count; i++)
            report_alloc_rule_add(&all, g.rules[i].subject, g.rules[i].rule, g.rules[i].message,
                                  g.rules[i].file, g.rules[i].line, g.rules[i].verdict);
        if (!report_alloc_write_junit(q->junit, &all, accept ? accept : struct_accept)) {
            fprintf(stderr, "qaudit gate: cannot write %s: %s\n", q->junit, strerror(errno));
            status = 2;
        }
        report_alloc_gate_free(&all);
    }
    free(accept);
done:
    report_alloc_gate_free(&g);
    report_free(&r);
    return status;
}
