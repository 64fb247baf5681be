/* JUnit XML as both halves of qaudit gate write it (the struct rules, probe/; the allocation
 * rules, reports/; both in one file when one command checks both): a testsuite "qaudit gate"
 * with one testcase per rule, classname the struct, function or site, name the rule. */
#ifndef COMMON_GATE_JUNIT_H
#define COMMON_GATE_JUNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum junit_verdict { JUNIT_PASSED, JUNIT_FAILED, JUNIT_SKIPPED };

struct junit_case {
    const char *classname, *name;
    const char *file; /* with line as attributes; NULL for neither */
    unsigned line;
    enum junit_verdict verdict;
    const char *message; /* why it failed or was skipped; unused when it passed */
};

/* Creates path and writes the XML declaration and the testsuite's opening tag with its counts;
 * skipped= only when count_skipped. NULL (errno set) when path cannot be created. */
FILE *gate_junit_open(const char *path, size_t tests, size_t failures, size_t skipped,
                      bool count_skipped);
/* One testcase: empty when it passed, with <skipped message=.../> or with <failure type=NAME
 * message=...> whose text is "to accept this change: ACCEPT" (nothing when accept is NULL). */
void gate_junit_case(FILE *out, const struct junit_case *c, const char *accept);
/* Closes the testsuite and the file; false when a write failed. */
bool gate_junit_close(FILE *out);

#endif
