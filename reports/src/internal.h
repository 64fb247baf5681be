/* Helpers shared by the reports sources (not part of the public headers). */
#ifndef REPORTS_INTERNAL_H
#define REPORTS_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "reports/report.h"

/* items.c (a leaf): appends one zeroed element to *items (count elements of size bytes) and returns
 * it; NULL when memory ran out (the array is then unchanged). */
void *report_push_item(void *items, size_t *count, size_t size);

/* strdup that maps NULL to NULL. */
char *report_copy_string(const char *s);

void report_locations_free(struct report_location *locations, size_t count);
void report_stack_free(struct report_stack *stack);
/* A deep copy of stack, modules remapped through module_map (NULL: kept). */
struct report_stack report_stack_copy(const struct report_stack *stack, const uint32_t *module_map);

/* Adds a single dump (already read) into the merged report; module indices are remapped. */
void report_merge_one(struct report *into, const struct report *dump);
/* fork_inheritance.c: each forked child's inherited_sites given the stacks its parents' dumps hold
 * for the same ids (as sites with only inherited figures), or counted unattributed. */
void report_inherited_resolve(struct report *dumps, size_t count);

/* run_files.c: dumps of the same runs left in their fallback directories but not given (a
 * process that dropped its privileges wrote there), named in the report's input notes. */
void report_run_files_note(struct report *report, const char *const *paths, size_t count);

/* programs.c: the programs (executables) of a report's processes. An id per executable's path
 * (never 0 nor REPORT_PROGRAMS_SEVERAL), and a site's once another dump's of id b joined it. */
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

/* Makes an error one printable line: control characters (a newline jansson quotes from the
 * input, or one in a path) become '?' (one_line.c). */
void report_one_line(char *text);

/* Reads one dump into a fresh report; REPORT_INPUT_ERROR with error set on a bad dump. */
enum report_status report_dump_read(const char *path, struct report *out, char *error, size_t size);

/* estimate.c: a 95 % Poisson interval for k events; the allocations one sample of mean_size bytes
 * stands for in a dump of process p; every site of a single dump given its estimate. */
void report_poisson_interval(double k, double *low, double *high);
double report_sample_weight(const struct report_process *p, double mean_size);
void report_estimate_sites(struct report *dump);

/* checks.c: the status of a dump's check that has none (an older dump): fail when not passed, n/a
 * when it could not apply (no queue hook seen, no connection), else pass; and the merge of one
 * dump's checks into a report. */
void report_check_derive(const struct report *dump, struct report_check *check);
void report_checks_merge(struct report *into, const struct report *dump);

/* merge.c: stacks compared by their frames (module and offset). */
bool report_same_stack(const struct report_stack *a, const struct report_stack *b);
uint64_t report_stack_hash(const struct report_stack *s);

/* Adds from's counters and estimate into to. */
void report_site_add(struct report_site *to, const struct report_site *from);

/* wrappers.c: a frame in the C or C++ runtime (libc, libstdc++, the loader). */
bool report_runtime_frame(const struct report *r, const struct report_frame *f);

/* wrappers.c: the wrappers the sites' stacks show (report->wrappers), with the glob-named ones
 * already folded; whether frame f is one of them. */
void report_wrappers_recognise(struct report *r);
bool report_wrapper_recognised(const struct report *r, const struct report_frame *f);
/* Adds to r->wrappers those of other's it lacks (other's modules matched by path and build id);
 * how many. */
size_t report_wrappers_adopt(struct report *r, const struct report *other);

/* by_design.c: each site's by_design, the reason its blocks are held by design (start-up blocks
 * of the C and C++ runtime and the loader) or NULL. */
void report_by_design_mark(struct report *r);

/* figures.c: what every rendering derives alike. */
enum site_rank {
    RANK_ALLOCS,
    RANK_BYTES,
    RANK_PEAK,
    RANK_NEVER_WRITTEN,
    RANK_LIVE,
    RANK_TEMPORARY
};
double report_site_figure(const struct report_site *s, enum site_rank key);
/* Sites whose figure is above 0, highest first, into out (room for every site); their number. */
size_t report_rank_sites(const struct report *r, enum site_rank key,
                         const struct report_site **out);
/* LIVE_AT_DETACH: every dump is a qaudit detach's, the last of an attach (JSON: "now"). */
enum live_scope { LIVE_AT_EXIT, LIVE_NOW, LIVE_MIXED, LIVE_AT_DETACH };
extern const char *const report_live_scope_names[4]; /* "exit", "now", "mixed", "now" */
enum live_scope report_live_scope(const struct report *r);
/* When the live figures were taken, for a sentence: "at exit", "at the snapshot", ... */
const char *report_live_scope_phrase(enum live_scope scope);
double report_shallow_share(const struct report *r);
/* Whether some site's figures are estimates (from sampled stacks). */
bool report_any_site_estimated(const struct report *r);
/* "always", "sampled:64", "sampled:4096b" ('?' after it when inferred), or "mixed". */
void report_stacks_mode(const struct report *r, char *out, size_t size);
void report_process_stacks(const struct report_process *p, char *out, size_t size);

/* The sites' share of the totals: allocations (calls, reallocs included) and bytes, with a 99 %
 * range when some sites are estimates (from their total number of samples). */
struct coverage {
    double allocs, allocs_low, allocs_high, bytes, bytes_low, bytes_high;
    bool estimated;
};
void report_coverage_of(const struct report *r, struct coverage *c);
/* Live blocks (and at most how many usable bytes) that no site accounts for: blocks whose
 * allocation had no stack (sampled, queue or off), or the sites' estimates falling short. */
struct unsited {
    double blocks, bytes;
    double sited_bytes; /* the sites' live bytes (requested) and the inheritance still held */
    bool estimated;     /* the sites' figures are estimates: so is this */
    bool every_site;    /* the stacks mode gives every allocation a site (always, fp) */
};
void report_live_without_site(const struct report *r, struct unsited *u);
/* What a site's live bytes are a share of. Sites count requested bytes, the totals usable ones:
 * with a site for every live block, the sites' own sum (shares add up to 100 %); else the usable
 * total, since the blocks without a site are known in usable bytes only. */
double report_live_share_whole(const struct report *r);
/* The allocator's rounding of the live blocks (usable less requested bytes), when every live
 * block has an exact site and none was inherited; -1 when it cannot be told. */
double report_live_rounding_bytes(const struct report *r);
/* A site "Live at exit" always lists: >= 1 % of the live bytes, or >= 100 live blocks. */
bool report_live_worth_listing(const struct report *r, const struct report_site *s);
/* The command that gives every live block its site: qaudit run (always, its default) on the
 * first process's command line, or qaudit attach on its pid when it was counted from an attach. */
void report_attribute_command(const struct report *r, char *out, size_t size);

/* cxx_short_names.c: a C++ name shortened as the tables show it (std::string, default template
 * arguments dropped, a long argument list <...>); name unchanged when nothing shortens. Returns
 * out. */
const char *report_short_name(const char *name, char *out, size_t size);

/* symbolize.c: a frame from its location first on, as report_frame_describe_from, with its
 * functions' names shortened when short_names. */
void report_frame_describe_level(const struct report *r, const struct report_frame *frame,
                                 size_t first, bool short_names, char *out, size_t size);

/* path_name.c: a path's last component ("/usr/bin/python3.11" -> "python3.11"). */
const char *report_path_base_name(const char *path);

/* runtimes.c: Python processes (by their executable), whether their objects reached malloc
 * (PYTHONMALLOC=malloc: nearly every call small). interpreters.c: the Debian packages with the
 * symbols of modules whose frames have none. */
bool report_process_is_python(const struct report_process *p);
bool report_python_objects_counted(const struct report_process *p);
/* A runtime whose objects live in a heap it maps itself (the JVM, V8, .NET), told by one dump's
 * modules and executable: report_process.runtime, 0 for none. report_runtime_name: "the JVM";
 * report_runtime_objects: "Java objects". */
unsigned report_runtime_of_dump(const struct report *dump);
const char *report_runtime_name(unsigned runtime);
const char *report_runtime_objects(unsigned runtime);
struct debug_hint {
    size_t module;     /* index in report.modules */
    uint64_t frames;   /* its frames without a function name, over every site */
    char package[128]; /* the Debian package that ships it, "" when none does */
    char debug[160];   /* the package with its debug symbols, "" when unknown */
};
/* The modules with frames without names, over the sites of program (report_program_id; 0: of
 * every program). */
size_t report_debug_hints(const struct report *r, uint64_t program, struct debug_hint *out,
                          size_t max);
/* "Frames in /usr/bin/python3.11 have no function names (...): Debian ships its symbols in
 * python3.11-dbg (apt-get install python3.11-dbg, then report again)." */
void report_debug_hint_sentence(const struct report *r, const struct debug_hint *h, char *out,
                                size_t size);

/* items.c: appends a formatted string to a list of strings. */
void report_push_string(char ***list, size_t *count, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
