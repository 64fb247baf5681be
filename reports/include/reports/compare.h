/* Builds side by side in the form of the change being audited: queue object, connection object,
 * allocator classes, and (from a dump of a run) allocations and extra heap bytes per connection
 * at depth one. */
#ifndef REPORTS_COMPARE_H
#define REPORTS_COMPARE_H

#include <stdio.h>

#include "probe/classes.h"
#include "reports/render.h"
#include "reports/report.h"

struct compare_build {
    const char *binary; /* layout read from its DWARF */
    const char *dump;   /* a qaudit-alloc/1 dump of a run of it, or NULL */
};

struct compare_row {
    char *label;      /* the binary's file name */
    char *queue_type; /* the queue member's type, e.g. "struct rxq" */
    uint64_t queue_size, connection_size;
    uint64_t classes[ALLOC_COUNT]; /* 0: outside the model */
    bool has_dump;
    uint64_t depth_one_connections; /* connections whose queue never held more than one value */
    double allocs_per_connection, bytes_per_connection;
};

struct compare_options {
    const char *connection_type; /* default "connection" */
    const char *queue_member;    /* default "queue" */
};

/* One row per build. REPORT_INPUT_ERROR with one line in error when a binary has no DWARF or
 * lacks the types, or a dump is bad. */
enum report_status compare_builds(const struct compare_build *builds, size_t count,
                                  const struct compare_options *options, struct compare_row *rows,
                                  char *error, size_t error_size);

void compare_render(FILE *out, const struct compare_row *rows, size_t count,
                    const struct compare_options *options, enum report_format format);

void compare_rows_free(struct compare_row *rows, size_t count);

#endif
