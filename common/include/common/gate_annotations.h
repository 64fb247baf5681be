/* GitHub Actions workflow commands as both halves of qaudit gate write them (the struct rules,
 * probe/; the allocation rules, reports/): one annotation per rule at its source file and line,
 * and a notice with the command that accepts the change. */
#ifndef COMMON_GATE_ANNOTATIONS_H
#define COMMON_GATE_ANNOTATIONS_H

#include <stdbool.h>
#include <stdio.h>

/* Writes s escaped as GitHub reads a workflow command: %, CR and LF always; : and , also in a
 * property (file=, title=). */
void github_escape(FILE *out, const char *s, bool property);

/* path relative to cwd when it lies under it (a job's checkout is its working directory, and
 * GitHub places annotations by paths relative to it); otherwise path itself. */
const char *github_workspace_path(const char *path, const char *cwd);

/* "::KIND file=F,line=N,title=qaudit gate (RULE)::MESSAGE" and a newline: kind "error" or
 * "warning"; without file (NULL) no file= and line=, line 0 no line=. file is made relative to
 * cwd (github_workspace_path). */
void gate_annotation(FILE *out, const char *kind, const char *file, unsigned line, const char *rule,
                     const char *message, const char *cwd);

/* "::notice title=qaudit gate::to accept this change: ACCEPT" and a newline. */
void gate_annotation_accept(FILE *out, const char *accept);

#endif
