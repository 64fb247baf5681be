/* The content room of the reports library: what a report says, decided once as blocks of a
 * document (document/) from the model that reading/ made, for every format alike. The sections,
 * in order (content.c, which calls the others; a section never calls content.c): what to look at
 * first (content_summary.c), the sites (content_sites.c), memory over time (content_timeline.c),
 * the cells and lines they all write (content_cells.c); the figures every rendering derives alike
 * (figures.c); the frame worth naming for a site (where.c); the debug-package sentences
 * (interpreters.c); why a timeline has gaps (timeline_gaps.c); two runs compared and said
 * (diff.c, content_diff.c); the frame walk the flame views share (flame_stacks.c). Uses
 * document/, reading/ and base/. Files: the .c files of content/. */
#ifndef REPORTS_ROOM_CONTENT_H
#define REPORTS_ROOM_CONTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../document/reports_document.h"
#include "../reading/reports_reading.h"
#include "reports/render.h"
#include "reports/report.h"

#define CELL 64

/* content_cells.c: cells and lines every section writes */
const char *report_count_cell(char *buf, uint64_t n);
/* A figure into buf (CELL bytes): 1234.4 -> "1,234", bytes as report_fmt_bytes; "~" before an
 * estimate. */
const char *report_fig_count(char *buf, double v, bool estimated);
const char *report_fig_bytes(char *buf, double v, bool estimated);
/* A site's stack as lines of the current BLOCK_LINES, innermost first. */
void report_stack_lines(struct document *d, const struct report *r, const struct report_stack *s);
/* where.c: the frame worth naming for a site: the first outside the runtime and the wrappers,
 * in C++ the program's own with the standard container it called; names shortened unless
 * long_names. */
void report_site_where(const struct report *r, const struct report_site *s, bool long_names,
                       char *out, size_t size);

/* diff.c: what matches a site across builds (qaudit diff, the allocation gate): its frames'
 * functions, innermost first, ';' between frames ("a<b" when a was inlined into b), a frame
 * without symbols as module+0xoffset; malloc'd, NULL when memory ran out. */
char *report_site_key(const struct report *r, const struct report_site *s);

/* content_summary.c: what to look at first (the HTML page's banner): the checks of a queue
 * audit, the largest leak, the costliest site, the most temporary allocations. */
void report_section_summary(struct document *d, const struct report *r);
/* content_cells.c: the sentence on live blocks without a site and why (with the command that
 * gives each its site where the stacks mode is why); false when every live block has its site.
 * report_held_when: when the blocks called live were, "at the snapshot", "at the detach", else
 * "at exit". */
bool report_unsited_sentence(const struct report *r, char *out, size_t size);
const char *report_held_when(const struct report *r);
/* "#3, big_leak (prog.c:4)": a site as the summary and the live section name it. */
void report_site_name(const struct report *r, const struct report_site *s, bool long_names,
                      char *out, size_t size);

/* content_sites.c; report_by_design_sentence: the blocks held by design and their sites (live
 * blocks of start-up that are no leak), each with its reason when detailed; false when there are
 * none. */
bool report_by_design_sentence(const struct report *r, bool detailed, char *out, size_t size);
void report_section_coverage(struct document *d, const struct report *r);
void report_section_sites(struct document *d, const struct report *r, unsigned top, bool *shown);
void report_section_live(struct document *d, const struct report *r, unsigned top, bool *shown);
void report_section_temporary(struct document *d, const struct report *r, unsigned top);

/* content_timeline.c */
void report_section_timeline(struct document *d, const struct report *r);

/* ---- content.c, content_diff.c ------------------------------------------------------------- */

struct report_options;
/* The blocks of a report (content.c). */
void report_build_document(struct document *d, const struct report *r,
                           const struct report_options *o);

struct report_diff;
/* The blocks of a diff, at most top sites per ranking (content_diff.c), and its qaudit-diff/1
 * JSON, which is written from the diff itself. */
void report_diff_document(struct document *d, const struct report_diff *diff, unsigned top);
void report_diff_render_json(FILE *out, const struct report_diff *diff);

/* ---- figures.c: what every rendering derives alike ------------------------------------------ */

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

/* ---- interpreters.c: the Debian packages with the symbols of modules whose frames have none. */
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
/* A time on the clock of dump_time_ns as seconds from p's start. */
double report_seconds_since_start(const struct report_process *p, uint64_t time_ns);

/* ---- flame_stacks.c: the frame walk the flame views share (pprof, folded stacks, the HTML
 * flame graph): a site's stack as the text report shows it (symbolized, inlined calls expanded,
 * wrappers already folded by report_fold), with a wrapper inlined into its caller at the leaf
 * folded too, and each level's name. */

/* The first location of frame (an index into s) that the views keep: in the leaf frame, the
 * leading locations of wrapper functions inlined into their caller are left out (at least one
 * stays), as report_fold leaves out whole wrapper frames; 0 in every other frame. */
size_t report_stack_first_location(const struct report *r, const struct report_stack *s,
                                   size_t frame);

/* The name of one level: the location's function ("??" when unknown); for a frame without
 * locations (not symbolized), "module+0xoffset", or "0xaddress" outside every module. */
const char *report_stack_level_name(const struct report *r, const struct report_frame *f,
                                    size_t location, char *out, size_t size);

/* Calls visit for every level of s from the root to the leaf, the order of folded stacks and
 * flame graphs: frames outermost first, and in a frame the function before the ones inlined into
 * it. location is the index into f->locations, 0 for a frame without locations. */
typedef void (*stack_visit)(void *context, const struct report_frame *f, size_t location);
void report_stack_walk_root_first(const struct report *r, const struct report_stack *s,
                                  stack_visit visit, void *context);

/* A site's weight (its estimate when sampled) for a view. */
double report_site_weight(const struct report_site *s, enum report_weight weight);

#endif
