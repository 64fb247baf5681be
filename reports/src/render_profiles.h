/* The profile exports of a report: pprof's profile.proto (render_pprof.c) and folded stacks
 * (render_folded.c). report_render dispatches to them. */
#ifndef REPORTS_RENDER_PROFILES_H
#define REPORTS_RENDER_PROFILES_H

#include <stdio.h>

#include "reports/render.h"
#include "reports/report.h"

/* A gzipped pprof heap profile of r's sites; warn (may be NULL) gets a line per module whose
 * build id is neither in the dump nor readable from its file. Write errors show in ferror(out). */
void report_render_pprof(FILE *out, const struct report *r, FILE *warn);

void report_render_folded(FILE *out, const struct report *r, enum report_weight weight);

#endif
