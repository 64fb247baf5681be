/* Memory over time in the report: each process's timeline merged from all its dumps (snapshots and
 * the last), the dumps' moments, the peaks, and the series in the JSON report. */
#ifndef REPORTS_TIMELINE_H
#define REPORTS_TIMELINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "reports/report.h"

/* to is a shallow copy of from (report_merge_one): gives it its own series and dump times, from's
 * dump time among them. */
void timeline_copy(struct report_process *to, const struct report_process *from);

/* A dump left out of the counts (superseded or a duplicate) still has points and a moment: they
 * join the series of the process of the same image (pid, start time, executable) in into. */
void timeline_absorb(struct report *into, const struct report_process *from);

void timeline_free(struct report_process *p);

/* The point with the highest live bytes (rss: resident set) of p, the first of equals; SIZE_MAX
 * without points. */
size_t timeline_peak(const struct report_process *p, bool rss);

/* Whether any process has a timeline. */
bool report_has_timeline(const struct report *r);

/* The JSON report's `timeline`: one object per process with a series (docs/report-format.md). */
json_t *timeline_json(const struct report *r);

#endif
