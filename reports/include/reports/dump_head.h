/* A dump's head, read without the rest of the file: whether a file is a qaudit-alloc dump at all,
 * and which process and run it is of. qaudit run's summary, report and diff pick dumps with it
 * (the dumps among a directory's or a glob's files, a run's dumps in the fallback directory,
 * --pid, --program and --run), so that they all take the same files for dumps. */
#ifndef REPORTS_DUMP_HEAD_H
#define REPORTS_DUMP_HEAD_H

#include <stdbool.h>
#include <stdint.h>

#define DUMP_HEAD_TEXT 4096

struct report_dump_head {
    uint64_t pid;                      /* process.pid */
    uint64_t start_time_ns;            /* process.start_time_ns: with pid, the image */
    char reason[32];                   /* reason: exit, exec, snapshot... */
    char run_id[64];                   /* process.run_id, "" when none */
    char exe[DUMP_HEAD_TEXT];          /* process.exe */
    char argv0[DUMP_HEAD_TEXT];        /* process.argv[0] (a process title, for some) */
    char fallback_dir[DUMP_HEAD_TEXT]; /* config.fallback_dir, "" when none */
};

/* Whether path is a dump: a regular file holding a JSON object whose "format" starts with
 * "qaudit-alloc/" (the preload writes it first), that a preload is not still writing (a
 * ".tmp." name); then what its head says in out. Only the first 256 KiB are read, unless the
 * members wanted come later (another writer's order): then the whole file. A dump of a format
 * this qaudit does not read is still a dump here: reading it says why it is refused. */
bool report_dump_head(const char *path, struct report_dump_head *out);

/* Whether a dump's program (process.exe, and argv[0]) is name: a glob (fnmatch) matched against
 * the executable's file name and the first word of argv[0] (a process title's "nginx:" read as
 * "nginx"), or against the executable's whole path when name holds a '/'. */
bool report_program_matches(const char *exe, const char *argv0, const char *name);

#endif
