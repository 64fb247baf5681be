/* What the layout tests share (probe_fixture.c): a scratch directory, shell commands, and
 * qaudit layout's JSON for a binary. Built with QAUDIT, the path of the qaudit under test. */
#ifndef PROBE_TESTS_FIXTURE_H
#define PROBE_TESTS_FIXTURE_H

#include <jansson.h>
#include <stddef.h>

extern char dir[128]; /* the test's scratch directory (setup_dir) */

/* Makes a fresh dir named after what ("/tmp/qaudit-WHAT-XXXXXX"); removes it. */
void setup_dir(const char *what);
void cleanup_dir(void);

/* Runs a shell command; its exit status, 128 when a signal ended it. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* qaudit layout --format json ARGS BINARY, which must exit 0 with a qaudit-layout/1 document. */
json_t *layout_json(const char *binary, const char *args);

#endif
