/* What the report library's unit tests share: a scratch directory for dump variants, the
 * committed example dump, rendering into a string, and reports built by hand. */
#ifndef QAUDIT_REPORT_FIXTURE_H
#define QAUDIT_REPORT_FIXTURE_H

#include <jansson.h>

#include "reports/render.h"
#include "reports/report.h"

const char *scratch_path(const char *name);           /* a path in the scratch directory */
json_t *example(void);                                /* docs/examples/dump-ring-depth9.json */
const char *write_doc(json_t *doc, const char *name); /* into the scratch directory */
char *render(const struct report *r, enum report_format format); /* the caller frees it */
int make_scratch(void **state);                                  /* cmocka group setup ... */
int remove_scratch(void **state);                                /* ... and teardown */
char *render_weighted(const struct report *r, enum report_format format,
                      enum report_weight weight);         /* render with --weight */
size_t occurrences(const char *text, const char *needle); /* non-overlapping */

/* A report built by hand: /bin/prog (main) and /lib/libc.so.6, one process (pid 7), room for
 * sites, xmalloc folded; a frame of module+offset with an inlined function (line 3) inside
 * function (at line), each NULL for none; a site's counters, estimated or exact. */
struct report *hand_report(size_t sites);
void hand_report_free(struct report *r);
struct report_frame hand_frame(uint32_t module, uint64_t offset, const char *inlined,
                               const char *function, unsigned line);
void hand_site(struct report *r, struct report_frame *frames, size_t n, double allocs, double bytes,
               double live, bool estimated);

#endif
