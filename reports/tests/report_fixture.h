/* What the report library's unit tests share: a scratch directory for dump variants, the
 * committed example dump, and rendering into a string. */
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

#endif
