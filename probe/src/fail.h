/* One line of error for the user, written one way: every message the probe fails with is
 * formatted into the caller's buffer and made one printable line, whatever a damaged file's names
 * or a parser's text hold. */
#ifndef PROBE_FAIL_H
#define PROBE_FAIL_H

#include <stddef.h>

/* fmt's text in error (at most size bytes), made one line (probe_one_line). */
void probe_fail(char *error, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Makes text one printable line: control characters (a newline in a section or type name read
 * from a damaged file) become '?'. */
void probe_one_line(char *text);

#endif
