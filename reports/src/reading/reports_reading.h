/* The reading room of the reports library: dumps and layout files read into the model
 * (reports/report.h), and every fact the model holds derived there, with the notes it carries
 * (the input notes, the trust's); what a report's sections say of them is content/'s. A dump read
 * (dump_reader.c, its head alone: dump_head.c) with its checks' statuses (checks.c), its sampled
 * sites' estimates (estimate.c) and its runtime (runtimes.c); dumps merged (merge.c: report_load)
 * with their forked children's inheritance (fork_inheritance.c), the dumps of the same runs left
 * elsewhere (run_files.c), their programs (programs.c) and their series over time
 * (timeline_series.c); the report's trust (precision.c); frames symbolized (symbolize.c); wrappers
 * recognised and folded away (wrappers.c, fold.c) and the blocks held by design (by_design.c); all
 * of it in the order a report wants (load_ready.c: report_load_ready), or two dumps' difference
 * (dump_delta.c: report_load_delta); the model's own small
 * pieces (model.c); layout files (layout_file.c). Uses base/. Files: the .c files
 * of reading/. */
#ifndef REPORTS_ROOM_READING_H
#define REPORTS_ROOM_READING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/reports_base.h"
#include "reports/report.h"

/* ---- dump_reader.c -------------------------------------------------------------------------- */

/* Reads one dump into a fresh report; REPORT_INPUT_ERROR with error set on a bad dump. */
enum report_status report_dump_read(const char *path, struct report *out, char *error, size_t size);

/* ---- model.c -------------------------------------------------------------------------------- */

void report_locations_free(struct report_location *locations, size_t count);
void report_stack_free(struct report_stack *stack);
/* A deep copy of stack, modules remapped through module_map (NULL: kept). */
struct report_stack report_stack_copy(const struct report_stack *stack, const uint32_t *module_map);
/* Adds from's counters and estimate into to. */
void report_site_add(struct report_site *to, const struct report_site *from);

/* ---- merge.c -------------------------------------------------------------------------------- */

/* Adds a single dump (already read) into the merged report; module indices are remapped. */
void report_merge_one(struct report *into, const struct report *dump);
/* Index in into->modules of each of dump's modules, adding those not yet known (malloc'd, NULL
 * when memory ran out). */
uint32_t *report_modules_merged(struct report *into, const struct report *dump);
/* Whether a and b (single dumps) are of the same process image: same pid, start time and
 * executable; and -1, 0 or 1 as a was taken before, with or after b: by sequence, or by dump
 * time for dumps that have no sequence. */
bool report_same_image(const struct report *a, const struct report *b);
int report_dump_order(const struct report *a, const struct report *b);
/* An open-addressing index of r's sites by stack, room for `sites` of them: *slots (a power of
 * two) entries holding site indices, SIZE_MAX when free (malloc'd; NULL when memory ran out); and
 * the entry of stack in it: its site's, or the free one where it would go. */
size_t *report_site_index(const struct report *r, size_t sites, size_t *slots);
size_t *report_site_slot(size_t *index, size_t slots, const struct report *r,
                         const struct report_stack *stack);
/* Stacks compared by their frames (module and offset). */
bool report_same_stack(const struct report_stack *a, const struct report_stack *b);
uint64_t report_stack_hash(const struct report_stack *s);

/* ---- fork_inheritance.c: each forked child's inherited_sites given the stacks its parents'
 * dumps hold for the same ids (as sites with only inherited figures), or counted unattributed. */
void report_inherited_resolve(struct report *dumps, size_t count);

/* ---- run_files.c: dumps of the same runs left in their fallback directories but not given (a
 * process that dropped its privileges wrote there), named in the report's input notes. */
void report_run_files_note(struct report *report, const char *const *paths, size_t count);

/* ---- programs.c: the programs (executables) of a report's processes. An id per executable's
 * path (never 0 nor REPORT_PROGRAMS_SEVERAL), and a site's once another dump's of id b joined
 * it. */
uint64_t report_program_id(const char *exe);
uint64_t report_programs_joined(uint64_t a, uint64_t b);
struct report_program {
    const char *exe;                     /* a process's, in the report */
    uint64_t id, processes, alloc_calls; /* processes: pids, whatever each exec'd */
};
/* The programs of r, most allocation calls first (then by name), up to max into out; how many
 * there are. */
size_t report_programs(const struct report *r, struct report_program *out, size_t max);
/* The program that leads a report of several (the first of report_programs; its executable in
 * *exe when exe is not NULL), 0 when the report's dumps are all of one program; whether a site is
 * the leading program's (any site when lead is 0); the live bytes of its sites. */
uint64_t report_lead_program(const struct report *r, const char **exe);
bool report_site_of_lead(const struct report_site *s, uint64_t lead);
double report_lead_live_bytes(const struct report *r, uint64_t lead);

/* ---- estimate.c: a 95 % Poisson interval for k events; the allocations one sample of mean_size
 * bytes stands for in a dump of process p; every site of a single dump given its estimate. */
void report_poisson_interval(double k, double *low, double *high);
double report_sample_weight(const struct report_process *p, double mean_size);
void report_estimate_sites(struct report *dump);
/* The counts the sampling notes give (sampled_large_sites, mean_size_estimates) taken again from
 * a one-process report's sites as they are now (a delta's: the window's samples). */
void report_estimate_recount(struct report *r);

/* ---- load_ready.c: a report made ready as qaudit report makes it: symbolized (unless
 * !s->symbols) and its wrappers folded; false with one line in error. */
bool report_make_ready(struct report *r, const struct report_load_settings *s, char *error,
                       size_t size);

/* ---- model.c: from's counters and estimate taken out of to (report_load_delta): counters
 * floored at 0, the estimate's figures signed. */
void report_site_subtract(struct report_site *to, const struct report_site *from);
/* The cumulative totals less e's, floored at 0; the live ones left as they are. */
void report_totals_subtract(struct report_totals *t, const struct report_totals *e);
/* The precision's counters less e's (blocks untracked, sites dropped, stacks truncated, usable
 * sizes dropped, never-written bytes unattributed), floored at 0; its states left as they are. */
void report_precision_subtract(struct report_precision *p, const struct report_precision *e);
/* The size histograms (requested_sizes, usable_sizes) less e's bucket by bucket, floored at 0;
 * the buckets left at 0 dropped. */
void report_sizes_subtract(struct report *r, const struct report *e);

/* ---- checks.c: the status of a dump's check that has none (an older dump): fail when not
 * passed, n/a when it could not apply (no queue hook seen, no connection), else pass; and the
 * merge of one dump's checks into a report. */
void report_check_derive(const struct report *dump, struct report_check *check);
void report_checks_merge(struct report *into, const struct report *dump);

/* ---- wrappers.c ----------------------------------------------------------------------------- */

/* A frame in the C or C++ runtime (libc, libstdc++, the loader). */
bool report_runtime_frame(const struct report *r, const struct report_frame *f);
/* The wrappers the sites' stacks show (report->wrappers), with the glob-named ones already
 * folded; whether frame f is one of them. */
void report_wrappers_recognise(struct report *r);
bool report_wrapper_recognised(const struct report *r, const struct report_frame *f);
/* Adds to r->wrappers those of other's it lacks (other's modules matched by path and build id);
 * how many. */
size_t report_wrappers_adopt(struct report *r, const struct report *other);

/* ---- by_design.c: each site's by_design, the reason its blocks are held by design (start-up
 * blocks of the C and C++ runtime and the loader) or NULL. */
void report_by_design_mark(struct report *r);

/* ---- symbolize.c: a frame from its location first on, as report_frame_describe_from, with its
 * functions' names shortened when short_names. */
void report_frame_describe_level(const struct report *r, const struct report_frame *frame,
                                 size_t first, bool short_names, char *out, size_t size);

/* ---- runtimes.c: Python processes (by their executable), whether their objects reached malloc
 * (PYTHONMALLOC=malloc: nearly every call small). */
bool report_process_is_python(const struct report_process *p);
bool report_python_objects_counted(const struct report_process *p);
/* The allocations of 512 bytes or less (pymalloc's limit) in r's requested_sizes. */
uint64_t report_small_allocs(const struct report *r);
/* A runtime whose objects live in a heap it maps itself (the JVM, V8, .NET), told by one dump's
 * modules and executable: report_process.runtime, 0 for none. report_runtime_name: "the JVM";
 * report_runtime_objects: "Java objects". */
unsigned report_runtime_of_dump(const struct report *dump);
const char *report_runtime_name(unsigned runtime);
const char *report_runtime_objects(unsigned runtime);

/* ---- timeline_series.c: memory over time in the report: each process's timeline merged from
 * all its dumps (snapshots and the last), the dumps' moments, the peaks. */

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
/* Whether any process has a timeline. */
bool report_has_timeline(const struct report *r);

#endif
