/* An allocation report: qaudit-alloc/1 dumps read, validated, merged and symbolized. Renderers and
 * the compare table read this model; only dump_reader.c knows the dump's JSON spelling. */
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

struct report_site {
    struct report_stack stack;
    uint64_t allocs, frees, bytes, live_bytes, peak_live_bytes, never_written_bytes, queue_allocs;
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

struct report_check {
    char *name;
    char *detail;           /* the dump's detail, or with several dumps how many failed */
    char *first_failure;    /* "pid P: detail" of the first dump where it failed, or NULL */
    unsigned dumps, failed; /* dumps that hold the check, and those where it failed */
};

struct report_process {
    uint64_t pid, ppid, start_time_ns, dump_time_ns;
    char *exe, *argv, *reason, *source; /* argv joined by spaces; source: the dump's path */
    char *stacks_mode;
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
    uint64_t calls[CALL_COUNT];
};

struct report_queues {
    uint64_t pushes, pops, discarded, moved, queued_now, grows, shrinks, returns_to_inline;
    struct report_count *depth_histogram; /* depth after each push -> pushes */
    size_t depth_histogram_count;
    struct report_count *allocs_by_depth;
    size_t allocs_by_depth_count;
    struct report_peak *by_peak_depth;
    size_t by_peak_depth_count;
    uint64_t opened, closed;
    uint64_t by_hooks, by_stack_patterns, by_both;
    uint64_t events_without_connection, refused_events, records_dropped;
};

struct report_precision {
    bool exact;
    uint64_t peak_live_bytes_within, blocks_untracked, sites_dropped, stacks_truncated;
    uint64_t usable_sizes_dropped, modules_dropped, never_written_unattributed;
    char **deepbind_libraries;
    size_t deepbind_count;
};

struct report {
    struct report_process *processes;
    size_t process_count;
    size_t superseded; /* earlier snapshots of a process whose later dump was also given */
    struct report_module *modules;
    size_t module_count;
    struct report_totals totals;
    struct report_bucket *requested_sizes;
    size_t requested_count;
    struct report_count *usable_sizes;
    size_t usable_count;
    struct report_site *sites;
    size_t site_count;
    struct report_queues queues;
    struct report_check *checks;
    size_t check_count;
    struct report_event *violations;
    size_t violation_count;
    uint64_t failure_candidates, failures_injected;
    struct report_event *failures;
    size_t failure_count;
    struct report_precision precision;
    bool symbolized;
};

enum report_status { REPORT_OK = 0, REPORT_CHECK_FAILED = 1, REPORT_INPUT_ERROR = 2 };

/* Reads and merges the dumps at paths into report (zeroed by the caller). A later dump of the same
 * process (same pid and start time) supersedes an earlier one: its counters already include it.
 * On a bad dump returns REPORT_INPUT_ERROR with one line in error naming the file and the field. */
enum report_status report_load(const char *const *paths, size_t count, struct report *report,
                               char *error, size_t error_size);

/* Symbolizes every frame with libdwfl, reading each module's file once. binary, when not NULL,
 * replaces the main program's file. Problems that leave frames raw or untrusted (a missing library,
 * a build id that differs) are written to warn, one line each; a missing binary is an error. */
enum report_status report_symbolize(struct report *report, const char *binary, FILE *warn,
                                    char *error, size_t error_size);

void report_free(struct report *report);

/* A check passed when it failed in no dump; the report passed when every check did. */
bool report_check_passed(const struct report_check *check);
bool report_passed(const struct report *report);

/* The by_peak_depth row of connections whose queue peaked at depth, or NULL. */
const struct report_peak *report_peak_at(const struct report_queues *queues, uint64_t depth);
/* value (the row's allocs or bytes) per connection of the row; 0 for a row without any. */
double report_per_connection(const struct report_peak *peak, uint64_t value);

/* A frame as one line: "function (file:line)" or "module+0xoffset"; inlined levels joined. */
void report_frame_describe(const struct report *report, const struct report_frame *frame, char *out,
                           size_t size);

#endif
