/* The gate room of the reports library (reports/src/gate/, beside render/ above content/): the
 * allocation half of qaudit gate. Figures gathered from a report (alloc_figures.c), the baseline's
 * "allocations" read and written (alloc_baseline.c), checked (alloc_check.c) and said
 * (alloc_output.c); the public side is reports/alloc_gate.h. */
#ifndef REPORTS_ROOM_GATE_H
#define REPORTS_ROOM_GATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "reports/alloc_gate.h"
#include "reports/report.h"

/* One site's figures, summed over the sites of a run whose functions read the same (key). Flow
 * figures per unit of work when the run's are normalised; ranges equal the figure when exact. */
struct alloc_site_figures {
    char *key;   /* report_site_key */
    char *where; /* "function (file:line)" */
    char *file;  /* of the site's first frame, or NULL */
    unsigned line;
    double allocs, allocs_low, allocs_high, bytes, bytes_low, bytes_high, temporary, live_blocks;
    bool estimated; /* from sampled stacks: allocs and bytes carry their error range */
};

/* What the gate reads of a run. */
struct alloc_figures {
    struct alloc_site_figures *sites;
    size_t count, capacity;
    double allocs, bytes, temporary; /* run totals (per unit of work when normalised) */
    double peak_live_bytes, live_blocks;
    /* The peak's range: threads publish live bytes in batches, so a peak is known only within
     * precision.peak_live_bytes_within either side (low == high when it is exact). */
    double peak_live_bytes_low, peak_live_bytes_high;
    bool has_sites;     /* the dumps kept stacks: site rules can apply */
    bool has_temporary; /* every dump counted temporary allocations */
    bool sampled;       /* the stacks were sampled: site figures are estimates */
    bool at_exit;       /* every process's last dump was written at its end: live is at exit */
    bool queue_audit;   /* report_queue_audit */
    double per_connection[64]; /* allocations per connection by peak depth; < 0: no such row */
    enum report_check_status depth_one; /* depth_one_no_alloc */
    char program[256];                  /* program_name of the first process */
};

/* alloc_figures.c: r's figures, flow ones divided by per when per > 0; false when memory ran
 * out. */
bool report_gate_figures(const struct report *r, double per, struct alloc_figures *out);
void report_gate_figures_free(struct alloc_figures *f);
/* The site of f whose key is key, or NULL. */
const struct alloc_site_figures *report_gate_site(const struct alloc_figures *f, const char *key);

/* alloc_baseline.c: the baseline document (jansson), or NULL with one line in error; a missing
 * file, when missing_ok, is a new document. */
json_t *report_gate_load(const char *path, bool missing_ok, char *error, size_t size);

#endif
