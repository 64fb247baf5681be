/* An allocation report: qaudit-alloc/1 dumps read, validated, merged and symbolized. Renderers and
 * the compare table read this model; only dump_reader.c knows the dump's JSON spelling.
 * Each list the reading grows has a capacity beside its count: the elements allocated, grown with
 * common/grow_array.h's array_push and array_reserve (0 is always safe: the next growth then
 * reallocates). Whoever sets a list's pointer sets its capacity with it. */
#ifndef REPORTS_REPORT_H
#define REPORTS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REPORT_NO_MODULE UINT32_MAX

/* A loaded object of the audited processes, merged by build id (or path when it has none). */
struct report_module {
    char *path;       /* as the dump names it */
    char *build_id;   /* hex, "" when the dump had none */
    char *file;       /* what symbolization read: path, or --binary for the main program */
    bool is_main;     /* the audited executable */
    bool missing;     /* file could not be opened: frames stay raw */
    bool mismatched;  /* file's build id differs from the dump's: frames are not trusted */
    bool has_symbols; /* symbolization found at least a symbol table */
};

/* One source position of a frame; an inlined call adds one location per level, innermost first. */
struct report_location {
    char *function; /* NULL when unknown */
    char *file;     /* NULL when no line table covers the address */
    unsigned line;
    bool inlined; /* this level was inlined into the next */
};

struct report_frame {
    uint32_t module; /* index into report.modules, or REPORT_NO_MODULE */
    uint64_t offset; /* address in the module's ELF view (address minus load bias) */
    struct report_location *locations;
    size_t location_count;
};

struct report_stack {
    struct report_frame *frames;
    size_t frame_count;
};

/* What a site's figures stand for. A sampled site's counters hold its samples only; the estimate
 * scales them by the sampling rate (estimate.c), with a range from a Poisson interval on the
 * number of samples. An exact site's estimate is its counters. */
struct report_estimate {
    double allocs, allocs_low, allocs_high;
    double bytes, bytes_low, bytes_high;
    double frees, live_bytes, live_blocks, peak_live_bytes, temporary;
    double live_low, live_high; /* range of live_bytes, from the live samples */
};

struct report_site {
    struct report_stack stack;
    uint64_t id; /* the dump's site id (sites[].id) while one dump is read; 0 once merged */
    uint64_t allocs, frees, bytes, live_bytes, peak_live_bytes, never_written_bytes, queue_allocs;
    uint64_t temporary;     /* allocations freed before the thread's next allocation or free (if
                             * counted) */
    double allocs_estimate; /* sampled: the dump's sum of each sample's weight, 0 when absent */
    double bytes_estimate;  /* the same for bytes: each sample's size times its weight */
    bool estimated;         /* from sampled stacks: est scales the counters */
    struct report_estimate est;
    size_t folded; /* leading wrapper frames folded away by report_fold */
    char *wrapper; /* the outermost function folded away, or NULL */
    /* Why its blocks are held by design (libstdc++'s emergency pool, a stdio buffer...), not
     * leaks: report_fold's by_design.c; NULL for any other site. */
    char *by_design;
    /* Forked children's part (sites[].inherited, and inherited_sites resolved through their
     * parents' dumps): blocks and bytes the site held at their forks, and what they freed. */
    uint64_t inherited_blocks, inherited_bytes, inherited_freed, inherited_freed_bytes;
    /* The executable of the dumps that hold it (report_program_id of process.exe), or
     * REPORT_PROGRAMS_SEVERAL when dumps of several hold the same stack. */
    uint64_t program;
};
#define REPORT_PROGRAMS_SEVERAL UINT64_MAX

/* A forked child's inheritance at a site where it allocated nothing (inherited_sites), and what
 * of it it freed there: its stack is the one its parent's dumps give the same id (resolved by
 * report_load). */
struct report_inherited_site {
    uint64_t id, blocks, bytes, freed_blocks, freed_bytes;
};

/* What forked children inherited at their forks (totals.inherited), summed over the processes. */
struct report_inherited {
    uint64_t processes; /* forked children among the dumps */
    uint64_t blocks, bytes, freed_blocks, freed_bytes, reallocated;
    /* Of blocks and bytes: those at sites whose stack no given dump holds (the parent's dump was
     * not given), and those of children that kept no site (stacks off). */
    uint64_t unattributed_blocks, unattributed_bytes;
};

/* An allocation wrapper recognised from the stacks (wrappers.c): a function, or a call
 * instruction of a function without a symbol, whose allocations all go straight to the allocator
 * on behalf of REPORT_WRAPPER_CALLERS callers or more. */
#define REPORT_WRAPPER_CALLERS 4
struct report_wrapper {
    char *name; /* the function, or "module+0xoffset" for a frame without a name */
    bool named; /* else module and offset are the frame's */
    uint32_t module;
    uint64_t offset;
    uint64_t callers; /* the distinct callers it allocates for, through wrappers above it */
};

/* A stack kept by a check or by fault injection, with what it was about. */
struct report_event {
    struct report_stack stack;
    uint64_t pid, depth, size, candidate;
};

struct report_count {
    uint64_t key, count;
};

struct report_bucket {
    uint64_t from, to, count;
};

struct report_peak {
    uint64_t peak_depth, connections, allocs, bytes;
};

enum report_check_status { CHECK_PASS, CHECK_FAIL, CHECK_NA };
extern const char *const report_check_status_names[3]; /* "pass", "fail", "n/a" */

struct report_check {
    char *name;
    char *detail;            /* the dump's detail, or with several dumps how many failed */
    char *first_failure;     /* "pid P: detail" of the first dump where it failed, or NULL */
    unsigned dumps, failed;  /* dumps that hold the check, and those where it failed */
    unsigned not_applicable; /* dumps where it could not apply (n/a) */
    char *na_detail;         /* why, in the first dump where it could not */
    enum report_check_status status; /* a single dump's: read, or derived for an older dump */
};

/* One point of a process's memory over time (the dump's timeline). */
struct report_point {
    uint64_t time_ns; /* on the clock of dump_time_ns (CLOCK_REALTIME) */
    uint64_t live_bytes, allocs, rss_bytes;
};

/* The state of a process's dump writer thread at its last dump (timeline_writer.state):
 * unknown in dumps older than it. */
enum report_writer { WRITER_UNKNOWN, WRITER_RUNNING, WRITER_WAITING, WRITER_ENDED, WRITER_FAILED };

/* How a dump's stacks were sampled (config.stacks "sampled"). */
enum report_sampling { SAMPLING_NONE, SAMPLING_COUNT, SAMPLING_BYTES };

struct report_process {
    uint64_t pid, ppid, start_time_ns, dump_time_ns;
    uint64_t
        attached_at_ns; /* process.attached_at: counted from a qaudit attach on; 0: from start */
    uint64_t sequence;  /* this image's dump number (process.sequence) */
    bool has_sequence;  /* an older dump has none: dump_time_ns orders its dumps */
    bool final;         /* the image's last dump (exit, _exit, fatal_signal, exec) */
    char *exe, *argv, *reason, *source; /* argv joined by spaces; source: the dump's path */
    char *command;                      /* argv as a shell would take it back, quoted */
    char *stacks_mode;                  /* config.stacks */
    char *end_signal;                   /* with reason fatal_signal, or NULL */
    char *run_id;                       /* process.run_id (set by qaudit run), or NULL */
    char *pythonmalloc; /* process.pythonmalloc (PYTHONMALLOC at start), NULL: unset or unknown */
    unsigned runtime;   /* a runtime with a heap of its own (the JVM, V8...): its objects never
                         * reach malloc; 0 none (reports/src/reading/runtimes.c) */
    char *fallback_dir; /* config.fallback_dir: where its run's refused dumps went, or NULL */
    bool forked;        /* a forked child: process.forked_from names the image it was forked from */
    uint64_t forked_from_pid, forked_from_start_ns;
    struct report_inherited
        inherited; /* a forked child's own totals.inherited (processes 0: none) */
    enum report_sampling sampling;
    uint64_t sample_every;  /* N of sampled:N or sampled:Nb */
    bool sampling_inferred; /* the dump does not say count or bytes: inferred (estimate.c) */
    bool exponential;       /* byte sampling draws exponential intervals (tcmalloc's way) */
    bool geometric;         /* count sampling draws geometric intervals (each call 1 in N) */
    uint64_t stack_depth;   /* config.stack_depth, 0 when absent */
    bool modules_known;     /* precision.modules_known (true when absent) */
    bool queue_sites;       /* config.queue_sites names queue code (qaudit run --sites) */
    uint64_t small_allocs;  /* its allocations of 512 bytes or less (requested_sizes) */
    uint64_t alloc_calls;   /* its allocs + reallocs (totals), kept apart from the merged ones */
    /* Memory over time (timeline_series.c): the points of every dump of this image, merged by time;
     * dump_times: when each of its dumps was written (snapshots and the last), sorted. */
    struct report_point *timeline;
    size_t timeline_count, timeline_capacity;
    uint64_t timeline_period_ns; /* the last dump's period, 0 without a timeline */
    uint64_t *dump_times;
    size_t dump_time_count, dump_time_capacity;
    /* Who took the points (the last dump's timeline_writer): the writer thread every period
     * while it ran, the allocating threads as they allocated otherwise. Times on the clock of
     * dump_time_ns, 0 when not so. */
    enum report_writer writer;
    uint64_t writer_started_ns, writer_stopped_ns;
    uint64_t writer_delay_ms; /* how long after the start the writer may start lazily */
    bool writer_forks;        /* it forked children: no writer for the time alone */
};

enum report_call {
    CALL_MALLOC,
    CALL_CALLOC,
    CALL_REALLOC,
    CALL_REALLOCARRAY,
    CALL_POSIX_MEMALIGN,
    CALL_ALIGNED_ALLOC,
    CALL_MEMALIGN,
    CALL_VALLOC,
    CALL_PVALLOC,
    CALL_FREE,
    CALL_COUNT
};
extern const char *const report_call_names[CALL_COUNT];

struct report_totals {
    uint64_t allocs, frees, reallocs, reallocs_in_place, reallocs_moved, aligned_allocs;
    uint64_t failed_allocs, bytes_requested, bytes_usable, live_bytes, live_blocks;
    uint64_t peak_live_bytes; /* with several processes: the sum of their peaks */
    uint64_t threads;
    uint64_t temporary; /* allocations freed before the thread's next allocation or free */
    bool has_temporary; /* every dump counted them (totals.temporary) */
    uint64_t calls[CALL_COUNT];
    /* Forked children: allocs and frees above are their own calls; live_bytes and live_blocks
     * include what they still held of their inheritance. */
    struct report_inherited inherited;
};

struct report_queues {
    uint64_t pushes, pops, discarded, moved, queued_now, grows, shrinks, returns_to_inline;
    struct report_count *depth_histogram; /* depth after each push -> pushes */
    size_t depth_histogram_count, depth_histogram_capacity;
    struct report_count *allocs_by_depth;
    size_t allocs_by_depth_count, allocs_by_depth_capacity;
    struct report_peak *by_peak_depth;
    size_t by_peak_depth_count, by_peak_depth_capacity;
    uint64_t opened, closed;
    uint64_t by_hooks, by_stack_patterns, by_both;
    uint64_t events_without_connection, refused_events, records_dropped;
};

struct report_precision {
    bool exact;
    uint64_t peak_live_bytes_within, blocks_untracked, sites_dropped, stacks_truncated;
    uint64_t usable_sizes_dropped, modules_dropped, never_written_unattributed;
    char **deepbind_libraries;
    size_t deepbind_count, deepbind_capacity;
    char **uninterposed_allocators; /* allocators whose own entry points were not counted */
    size_t uninterposed_count, uninterposed_capacity;
    char **unreachable_allocators; /* "LIBRARY has ALLOCATOR": none interposing reaches */
    size_t unreachable_count, unreachable_capacity;
    /* qaudit attach: "ALLOCATOR: ENTRY, ... bound by MODULE, ..." (or "ALLOCATOR: none bound"),
     * the allocators' own entry points the attach did not reach (attach_unreached) */
    char **attach_unreached;
    size_t attach_unreached_count, attach_unreached_capacity;
    unsigned unexplained_anonymous; /* dumps whose anonymous memory the counts do not explain */
    uint64_t unexplained_bytes;     /* their anonymous growth beyond the counted peak */
    unsigned modules_unknown;       /* dumps written before any module map was gathered */
};

/* How far the report's figures can be trusted (precision.c): counts is "exact" or "partial",
 * each note says why in a sentence. */
struct report_trust {
    bool partial;
    char **notes;
    size_t note_count, note_capacity;
};

struct report {
    struct report_process *processes;
    size_t process_count, process_capacity;
    size_t superseded; /* earlier snapshots of a process whose later dump was also given */
    struct report_module *modules;
    size_t module_count, module_capacity;
    struct report_totals totals;
    struct report_bucket *requested_sizes;
    size_t requested_count, requested_capacity;
    struct report_count *usable_sizes;
    size_t usable_count, usable_capacity;
    struct report_site *sites;
    size_t site_count, site_capacity;
    struct report_inherited_site *inherited_sites; /* one dump's, until report_load resolves them */
    size_t inherited_site_count, inherited_site_capacity;
    struct report_queues queues;
    struct report_check *checks;
    size_t check_count, check_capacity;
    struct report_event *violations;
    size_t violation_count, violation_capacity;
    uint64_t failure_candidates, failures_injected;
    struct report_event *failures;
    size_t failure_count, failure_capacity;
    struct report_precision precision;
    bool symbolized;
    size_t duplicates;  /* dumps given twice (same pid, start time and sequence) */
    char **input_notes; /* one sentence per dump left out as a duplicate */
    size_t input_note_count, input_note_capacity;
    bool has_sequences; /* every dump carries process.sequence */
    char **skip;        /* the wrapper globs report_fold applied */
    size_t skip_count, skip_capacity;
    size_t user_skip; /* skip[user_skip] on: --skip's own, folded wherever they are */
    struct report_wrapper *wrappers; /* recognised from the stacks (report_fold) */
    size_t wrapper_count, wrapper_capacity;
    size_t folded_sites;          /* sites merged into another once their wrappers were folded */
    bool temporary_missing;       /* some dump does not count temporary allocations */
    uint64_t sampled_large_sites; /* sites byte-sampled by a fixed countdown, mean size >= N */
    uint64_t mean_size_estimates; /* byte-sampled sites counted from their mean sampled size */
    struct report_trust trust;
    /* A delta (report_load_delta): the earlier dump's time (CLOCK_REALTIME); 0 otherwise. */
    uint64_t delta_from_ns;
};

enum report_status { REPORT_OK = 0, REPORT_CHECK_FAILED = 1, REPORT_INPUT_ERROR = 2 };

/* Reads and merges the dumps at paths into report (zeroed by the caller). A later dump of the same
 * process (same pid and start time) supersedes an earlier one: its counters already include it.
 * On a bad dump returns REPORT_INPUT_ERROR with one line in error naming the file and the field. */
enum report_status report_load(const char *const *paths, size_t count, struct report *report,
                               char *error, size_t error_size);

/* The build id of the ELF file at path (a module's file, /proc/PID/exe) as lowercase hex in out:
 * BUILD_ID_NO_FILE when the file cannot be opened (gone, or not a regular file), BUILD_ID_NONE
 * when it is not ELF or has no NT_GNU_BUILD_ID note (libdw's dwelf_elf_gnu_build_id). */
enum build_id_status { BUILD_ID_FOUND, BUILD_ID_NONE, BUILD_ID_NO_FILE };
enum build_id_status report_elf_file_build_id(const char *path, char *out, size_t size);

/* How report_load_ready makes dumps ready: symbolized unless !symbols (binary, debug_file: the
 * main program's files, may be NULL; warn: where symbolization's warnings go, NULL: stderr),
 * wrappers folded (report_default_skip and those the stacks show unless !skip_defaults, then
 * skip's globs). */
struct report_load_settings {
    const char *binary, *debug_file;
    bool symbols, skip_defaults;
    const char *const *skip;
    size_t skip_count;
    FILE *warn;
};

/* The dumps at paths read and merged into r (zeroed by the caller), symbolized and folded as
 * qaudit report does; false with one line in error. */
bool report_load_ready(const char *const *paths, size_t count, const struct report_load_settings *s,
                       struct report *r, char *error, size_t size);

/* What one process image did between two of its dumps (a delta profile, as Go's net/http/pprof
 * serves ?seconds=S), into r (zeroed by the caller), made ready as report_load_ready makes it:
 * each site's estimate (est) is the change (allocations, bytes, frees made in between; live
 * blocks and bytes negative where more was freed than allocated), its counters the same floored
 * at 0, and the sites whose profile values did not change are left out. The cumulative totals
 * are the change, the rest (live totals, queues, checks) the later dump's; delta_from_ns is set.
 * False with one line in error: a bad dump, not one image, or earlier not written first. */
bool report_load_delta(const char *earlier, const char *later, const struct report_load_settings *s,
                       struct report *r, char *error, size_t size);

/* Symbolizes every frame with libdwfl, reading each module's file once, with its separate debug
 * file found by build id or debuglink. binary, when not NULL, replaces the main program's file,
 * and debug_file, when not NULL, is its debug file. Problems that leave frames raw or untrusted (a
 * missing library, a build id that differs) are written to warn, one line each; a missing binary
 * is an error. */
enum report_status report_symbolize(struct report *report, const char *binary,
                                    const char *debug_file, FILE *warn, char *error,
                                    size_t error_size);

void report_free(struct report *report);

/* A check's status over every dump: fail when it failed in one, n/a when it could apply in none,
 * else pass. The report passed when no check failed (an n/a check does not fail it). */
enum report_check_status report_check_status(const struct report_check *check);
/* The check called name (depth_one_no_alloc, conservation...), NULL when no dump has it. */
const struct report_check *report_check_named(const struct report *report, const char *name);
bool report_check_passed(const struct report_check *check); /* status is pass */
bool report_passed(const struct report *report);
/* How many checks have each status, indexed by enum report_check_status. */
void report_check_tally(const struct report *report, unsigned tally[3]);

/* What report_fold folds. globs (fnmatch) name wrappers by their function: the first user_from
 * of them (the defaults) fold a site's leading frames, the rest (--skip's) a frame wherever it
 * is and everything inside it, as pprof's drop_frames does. recognise: wrappers recognised from
 * the stacks too (wrappers.c), the default; --skip none turns it off with the defaults. */
struct report_fold_settings {
    const char *const *globs;
    size_t glob_count, user_from;
    bool recognise;
};

/* Wrappers: folds every site's leading wrapper frames, so the site is the first frame outside
 * them, and merges sites that become the same. Needs symbols. The globs are kept in
 * report->skip, the recognised wrappers in report->wrappers. Then numbers the sites in the
 * order reports rank them first: most allocations (then bytes) first. */
void report_fold(struct report *report, const struct report_fold_settings *settings);
/* Two runs compared fold alike: r also folds the wrappers recognised in other (already folded
 * by report_fold) and not in r, as a wrapper with 4 callers in one run may have 3 in the other. */
void report_fold_alike(struct report *r, const struct report *other);
/* The default wrapper globs (zmalloc*, xmalloc, g_malloc*, operator new*, ...), NULL-ended. */
extern const char *const report_default_skip[];
/* Whether function matches one of report->skip or is a wrapper recognised by name. */
bool report_is_wrapper(const struct report *report, const char *function);

/* The report's trust: counts exact or partial, and the notes saying why (report_load calls it;
 * report_fold and report_symbolize do not change it). */
void report_assess(struct report *report);

/* Sums over sites of estimated allocations and bytes: the sites' coverage of the totals. */
void report_coverage(const struct report *report, double *allocs, double *bytes);

/* A queue audit: queue hooks were seen (events, connections, attribution, violations) or queue
 * code was named (--sites). Only then do reports speak of queues, checks and connections. */
bool report_queue_audit(const struct report *report);

/* The by_peak_depth row of connections whose queue peaked at depth, or NULL. */
const struct report_peak *report_peak_at(const struct report_queues *queues, uint64_t depth);
/* value (the row's allocs or bytes) per connection of the row; 0 for a row without any. */
double report_per_connection(const struct report_peak *peak, uint64_t value);

/* A frame as one line: "function (file:line)" or "module+0xoffset"; inlined levels joined. */
void report_frame_describe(const struct report *report, const struct report_frame *frame, char *out,
                           size_t size);
/* The same from the frame's location first on (the inlined levels inside it left out). */
void report_frame_describe_from(const struct report *report, const struct report_frame *frame,
                                size_t first, char *out, size_t size);

/* The program's name as the user ran it, from its command line (argv joined by spaces, or the
 * process title a server writes over it): the last component of its first word, without the ':'
 * a title puts after it. "redis-server 127.0.0.1:6379" is redis-server's (though its exe is the
 * file redis-check-rdb the symlink points to), "nginx: worker process" nginx's. exe's last
 * component when there is no command line. */
void program_name(const char *command_line, const char *exe, char *out, size_t size);

#endif
