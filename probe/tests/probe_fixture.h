/* What the layout tests share (probe_fixture.c): a scratch directory, shell commands, qaudit
 * layout's JSON for a binary, whole files read and written, where a section lies in an ELF file.
 * Built with QAUDIT, the path of the qaudit under test. */
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

/* A whole small file, NUL-terminated; its length in *size (size may be NULL). */
char *slurp(const char *path, size_t *size);
/* Writes size bytes of data to path. */
void spill(const char *path, const char *data, size_t size);
/* Where section name lies in an ELF file (its offset and size), from readelf -SW. */
void section(const char *binary, const char *name, long *offset, long *size);

#endif
