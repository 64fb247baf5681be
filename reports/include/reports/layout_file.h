/* Layouts for reports: from a qaudit-layout/1 file (what `qaudit layout --format json` wrote) or
 * from a binary's DWARF through the probe. */
#ifndef REPORTS_LAYOUT_FILE_H
#define REPORTS_LAYOUT_FILE_H

#include <stddef.h>

#include "probe/layout.h"
#include "reports/report.h"

/* Reads a qaudit-layout/1 file into out (free with layout_free); holes are recomputed from the
 * members. REPORT_INPUT_ERROR with one line in error on a bad file. */
enum report_status layout_file_read(const char *path, struct layout_set *out, char *error,
                                    size_t error_size);

/* The types of set whose names match one of patterns, in pattern order; each pattern must match
 * (else REPORT_INPUT_ERROR naming it). *out is allocated; *count set. */
enum report_status layout_select(const struct layout_set *set, const char *const *patterns,
                                 size_t pattern_count, const struct layout_type ***out,
                                 size_t *count, char *error, size_t error_size);

#endif
