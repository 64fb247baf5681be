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
void report_timeline_copy(struct report_process *to, const struct report_process *from);

/* A dump left out of the counts (superseded or a duplicate) still has points and a moment: they
 * join the series of the process of the same image (pid, start time, executable) in into. */
void report_timeline_absorb(struct report *into, const struct report_process *from);

void report_timeline_free(struct report_process *p);

/* The point with the highest live bytes (rss: resident set) of p, the first of equals; SIZE_MAX
 * without points. */
size_t report_timeline_peak(const struct report_process *p, bool rss);

/* ---- timeline_gaps.c: why a process has fewer points than its life at the period gives ---- */
enum gap_reason {
    GAP_NOT_RUNNING,    /* the writer ran: the process did not (stopped, no processor time) */
    GAP_WRITER_WAITING, /* before the writer's lazy start: points only as it allocated */
    GAP_PROCESS_FORKS,  /* a process that forks keeps one thread: the same */
    GAP_WRITER_FAILED,  /* the writer could not start: the same */
    GAP_WRITER_ENDED,   /* the writer ended with the main thread: the same */
    GAP_UNKNOWN         /* a dump older than timeline_writer */
};
struct timeline_gap {
    uint64_t from_ns, to_ns; /* the points around it, or the process's start and its first */
    enum gap_reason reason;
};
/* The stretches longer than two periods without a point, in order: the first max in out, the
 * count of all returned. */
size_t report_timeline_gaps(const struct report_process *p, struct timeline_gap *out, size_t max);
/* From the process's start to its last point. */
uint64_t report_timeline_life_ns(const struct report_process *p);
/* Whether its chart would show anything: three points or more, and no stretch without a point
 * of half its life or more. */
bool report_timeline_drawable(const struct report_process *p);
const char *report_timeline_gap_reason_name(enum gap_reason reason); /* the JSON report's */
/* "no point from A s to B s: why" */
void report_timeline_gap_sentence(const struct report_process *p, const struct timeline_gap *g,
                                  char *out, size_t size);

/* Whether any process has a timeline. */
bool report_has_timeline(const struct report *r);

/* The JSON report's `timeline`: one object per process with a series (docs/report-format.md). */
json_t *report_timeline_json(const struct report *r);

#endif
