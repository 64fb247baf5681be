/* The probe's base room: what every other room may use, and which uses nothing of the probe's.
 * One line of error for the user, written one way; tables keyed by a DIE's address (die_table.h,
 * inline); rounding up to a multiple. Files: the .c files of base/. */
#ifndef PROBE_ROOM_BASE_H
#define PROBE_ROOM_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- fail.c -------------------------------------------------------------------------------------
 * One line of error for the user, written one way: every message the probe fails with is formatted
 * into the caller's buffer and made one printable line, whatever a damaged file's names or a
 * parser's text hold. */

/* fmt's text in error (at most size bytes), made one line (probe_one_line). */
void probe_fail(char *error, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Makes text one printable line: control characters (a newline in a section or type name read
 * from a damaged file) become '?'. */
void probe_one_line(char *text);

/* ---- die_table.c --------------------------------------------------------------------------------
 * Tables keyed by a DIE's address: in a header of their own because their look-ups are inline
 * (on the path of every member read). */
#include "die_table.h"

/* ---- round up, inline ---------------------------------------------------------------------------
 * n rounded up to a multiple of step (a size to its alignment, a request to its class); n itself
 * for a step of 0 or 1. Used by the class models, the C++ ABI's layout and --reorganize. */

static inline uint64_t probe_round_up(uint64_t n, uint64_t step)
{
    return step > 1 ? (n + step - 1) / step * step : n;
}

#endif
