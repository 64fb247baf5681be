/* The qaudit command's subcommands and the helpers they share. Each returns the exit status:
 * 0 ok, 1 a check failed, 2 bad usage or input (one line on stderr says what and where). */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct option;
struct report;

int command_layout(int argc, char **argv);
int command_classes(int argc, char **argv);
int command_gate(int argc, char **argv);
int command_run(int argc, char **argv);
int command_snapshot(int argc, char **argv);
int command_report(int argc, char **argv);
int command_compare(int argc, char **argv);
int command_diff(int argc, char **argv);
int command_attach(int argc, char **argv);
/* cmd_run.c: the interposer beside this qaudit (build tree: bin/ and lib/), or installed */
bool preload_find(char *out, size_t size);
bool stacks_mode_valid(const char *mode); /* off, sampled:N[b], always, fp or queue */
int command_detach(int argc, char **argv);
int command_serve(int argc, char **argv); /* cmd_serve.c, over serve/ */

/* A whole decimal in [min, 2^20] for --option of command, or false after saying why. */
bool parse_option_number(const char *command, const char *option, const char *text, long min,
                         long *out);

/* The one line a mistake gets (options.c). nearest_name: the name of names nearest to word (up
 * to an "="), by edit distance, or NULL when none is near. option_error: says what getopt_long
 * refused at argv[optind - 1] ('?' an unknown option, with the nearest of options; ':' a missing
 * value); usage_error: problem and where help is. Both return 2. */
const char *nearest_name(const char *word, const char *const *names, size_t count);
int option_error(const char *command, int opt, char **argv, const struct option *options);
int usage_error(const char *command, const char *problem);
/* Flushes and closes out (standard output is only flushed; written to path): true, or false after
 * one line with the system's reason (a full disk is seen here, not at fopen). */
bool write_finished(const char *command, FILE *out, const char *path);

/* QAUDIT_OUT's pattern expanded as the interposer does: %p the pid, %% a percent sign, and %n
 * the sequence number; a negative pid or sequence is "*" (a glob for every pid or sequence). */
void dump_path_expand(const char *pattern, pid_t pid, long sequence, char *out, size_t size);

/* The directory of pattern's dumps: its part before the last '/' ("." when none, "/" for a
 * top-level name); it may hold %p or %n. */
void dump_path_directory(const char *pattern, char *out, size_t size);
/* The globs of pattern's names for pid (negative: any): plain, the expanded pattern; variants,
 * the names the preload gives when the plain one is another's (a suffix before the extension:
 * ".<pid>", ".<k>", ".snapshot-<n>"). */
void dump_path_globs(const char *pattern, pid_t pid, char *plain, char *variants, size_t size);
/* The dump of the program qaudit run started (pid), of its run (run_id; NULL: any): the plain
 * name when it holds one (the last image's), else the newest of its variants; false when none. */
bool dump_path_program(const char *pattern, pid_t pid, const char *run_id, char *out, size_t size);

/* dump_list.c: what report takes and a diff's side is: a dump, or a directory or a glob
 * (quoted, or one the shell left as it was) standing for the dumps among its files (told by
 * their content, reports/dump_head.h). Added to list (zeroed by the caller); false with one line
 * in error when a directory or glob holds none. paths: the entries' paths, NULL-ended, for
 * report_load_ready. */
struct dump_entry {
    char *path;
    bool known;    /* a dump: what follows is its head's */
    bool from_set; /* found in a directory or a glob: it stands for its run */
    uint64_t pid;
    char run_id[64];
    char *exe, *argv0, *fallback_dir;
};
struct dump_list {
    struct dump_entry *entries;
    char **paths; /* the entries' paths, NULL-terminated */
    size_t count, entry_capacity, path_capacity;
};
bool expand_dumps(const char *arg, struct dump_list *list, char *error, size_t size);
/* The dumps of the runs of the dumps found in directories and globs that their runs' fallback
 * directories hold (qaudit-fallback-<run id>-*, of the same run id), added, each run's said in
 * one line on stderr ("qaudit COMMAND: ..."); how many. */
size_t dump_list_take_fallbacks(struct dump_list *list, const char *command);
/* --run, --pid and --program: the dumps kept are those of the run (NULL: any), of one of the
 * pids and of one of the programs (none given: any; reports/dump_head.h says how a program
 * matches). A file that is no dump is kept: reading it says why. False with one line in error
 * when no dump matches. */
struct dump_filter {
    const char *run;
    const long *pids;
    size_t pid_count;
    const char *const *programs;
    size_t program_count;
};
bool dump_list_narrow(struct dump_list *list, const struct dump_filter *f, char *error,
                      size_t size);
/* What report and diff do with the dumps given: narrowed to f's run, its fallback dumps taken
 * in, then narrowed to f's pids and programs. */
bool dump_list_pick(struct dump_list *list, const struct dump_filter *f, const char *command,
                    char *error, size_t size);
void dump_list_free(struct dump_list *list);

/* run_summary.c: after qaudit run: the program's dump (dump_path_program), what it holds, how
 * many more the run left, its processes still running, and the command that reports the whole
 * run; false when there is none (said why). status: the program's, as qaudit run returns it;
 * program: as run was given it; fallback_left: the run's dumps run_fallback_collect could not
 * move. */
bool run_summary(const char *pattern, pid_t pid, int status, const char *program,
                 size_t fallback_left);

/* run_dumps.c: the dumps under pattern's names (every pid and sequence, and the preload's
 * suffixed names) that carry run_id, but for own (the program's): the program's images before
 * its last exec, its snapshots, and those of the processes it started, how many of which
 * (started: pid not program; own_image: of the image own is of, its snapshots, which own
 * supersedes); whether any is of a process it started. */
struct run_dumps {
    char **paths;
    size_t count, started, own_image;
};
bool run_dumps_find(const char *pattern, const char *own, pid_t program, const char *run_id,
                    struct run_dumps *out);
void run_dumps_free(struct run_dumps *d);
/* run_out.c: --out as given (out) made the pattern qaudit run exports (into inside): a
 * directory's default_name inside it (a missing one ending in '/' made, said on stderr); NULL,
 * or the one line that says why --out is refused. */
/* dir and the directories missing above it made (mode 0777 less the umask), as mkdir -p; those
 * made are given to owner and group when owner is not NULL and qaudit runs as root (attach makes
 * them for the process's user, so that a worker as www-data can write there). 0 or an errno. */
int out_make_directories(const char *dir, const uid_t *owner, gid_t group);
const char *run_out_resolve(const char *out, char *inside, size_t size, const char *default_name);
/* The processes of the run still running (QAUDIT_RUN_ID=run_id in their environment, this one
 * left out): how many, the first max of them in out. */
size_t run_survivors(const char *run_id, pid_t *out, size_t max);

/* program_file.c: program as execvp would find it (PATH searched when it has no '/'), or false;
 * program_unreachable: whether no preload could count its allocations (a static program, or one
 * built for another machine), with the one line that says why in why. */
bool program_resolve(const char *program, char *out, size_t size);
bool program_unreachable(const char *program, char *why, size_t size);
/* Whether program is a Go program (its .note.go.buildid): one built with cgo is reached, but it
 * ends with the exit_group system call, past exit(), where the preload writes its last dump. */
bool program_is_go(const char *program);

/* allocator_shims.c: the shims (beside preload, colon-separated in out) for the allocators
 * with entry points of their own that program loads; how many. */
size_t allocator_shims(const char *program, const char *preload, char *out, size_t size);

/* run_fallback.c: dumps a process could not write where the run's go (docs/dump-format.md) */
void run_fallback_prepare(void);                  /* QAUDIT_RUN_ID for the run's processes */
size_t run_fallback_collect(const char *pattern); /* moved beside the others, said on stderr;
                                                    how many could not be */

/* preload_control.c: the libqaudit-preload.so images mapped in another process and their control
 * records (qaudit/control.h), read from its memory, never from its environment. */
#define PRELOAD_PATH_MAX 4096
struct qaudit_control;
struct preload_image {
    char path[PRELOAD_PATH_MAX]; /* as /proc/PID/maps names it */
    char dev[16];
    uint64_t inode;
    uint64_t map_start, map_end; /* its mapping at file offset 0 (map_end 0: none seen) */
    uint64_t record;             /* the record's address in the process, 0: the file has none */
    uint64_t record_size;        /* the symbol's size */
    int unreadable;              /* errno when the mapped file could not be opened */
};
/* The files mapped in pid whose path contains name_part (their mappings at offset 0), up to max;
 * the count, or -errno when /proc/PID/maps is unreadable. */
int mapped_modules(pid_t pid, const char *name_part, struct preload_image *images, int max);
/* A function's address in pid, from the mapped file's .dynsym; 0 when it has none. */
uint64_t mapped_function(pid_t pid, const struct preload_image *img, const char *name);
/* Fills up to max images mapped in pid; the count, or -errno when /proc/PID/maps is unreadable. */
int preload_images(pid_t pid, struct preload_image *images, int max);
/* A consistent copy of img's record (even, unchanged generation): 0, or an errno (ESRCH gone,
 * EPERM not allowed to read its memory, EFAULT not mapped, EAGAIN never steady). */
int preload_control_read(pid_t pid, const struct preload_image *img, struct qaudit_control *out);
/* Whether img holds a record this qaudit reads (its version and size) and out a copy of it; false
 * for any other, or one not read (qaudit snapshot says which, with preload_control_read). */
bool preload_control_current(pid_t pid, const struct preload_image *img,
                             struct qaudit_control *out);
/* What the preload's attach could not do as asked (QAUDIT_ATTACH_NOTES_SYMBOL): lines, or "". */
void preload_attach_notes(pid_t pid, const struct preload_image *img, char *out, size_t size);
/* Writes token into img's request field: the preload's writer thread then dumps. 0 or errno. */
int preload_control_request(pid_t pid, const struct preload_image *img, uint64_t token);
/* The same into the field at offset (detach_request, for qaudit detach). */
int preload_control_write(pid_t pid, const struct preload_image *img, size_t offset,
                          uint64_t token);
/* The direct children of pid that have the preload mapped (qaudit run's program); how many. */
int preload_children(pid_t pid, pid_t *children, int max);
/* Whether a record's pid (getpid() inside the process) is pid, in any of its pid namespaces. */
bool preload_pid_matches(pid_t pid, int32_t record_pid);

/* Why reading another process's memory, or tracing it, was refused: yama's ptrace_scope, or
 * credentials. */
void ptrace_permission_hint(char *out, size_t size);
/* /proc/sys/kernel/yama/ptrace_scope, -1 without yama. */
int ptrace_scope(void);

/* ---- proc_status.c ---- */
/* A field of /proc/PID/status ("State:", "TracerPid:", "Uid:"...) without its name and leading
 * blanks, or "" (no such field, no such process). */
void proc_status_field(pid_t pid, const char *name, char *out, size_t size);

/* ---- ptrace_writer_start.c ---- */
/* Starts the dump writer of a forked child whose preload (img) has not started it yet, through
 * ptrace: 0, or an errno with one line in why (EPERM: ptrace refused; EBUSY: no thread of it was
 * waiting in a system call). */
int preload_writer_start(pid_t pid, const struct preload_image *img, char *why, size_t size);

#endif
