/* Running programs nobody here wrote for test_foreign (foreign_run.c): with an environment given
 * in full, output into files, a time limit, and the per-process totals their runs leave (qaudit
 * dumps, valgrind logs). */
#ifndef QAUDIT_FOREIGN_RUN_H
#define QAUDIT_FOREIGN_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RUN_TIMED_OUT -1

struct foreign_run {
    const char *const *argv;  /* argv[0] is the program's path */
    const char *const *env;   /* the whole environment, "K=V", NULL-terminated */
    const char *const *extra; /* more "K=V", NULL-terminated, or NULL */
    const char *dir;          /* working directory, or NULL */
    const char *in;           /* file for stdin (/dev/null if NULL) */
    const char *out, *err;    /* files for stdout and stderr (/dev/null if NULL) */
    const char *user;         /* run as this user (its groups too), or NULL: as the caller */
    int limit_s;              /* killed (with its process group) after this; 0: 300 s */
    pid_t pid;                /* set by foreign_run */
};

/* Runs to the end, then kills what is left of its process group; returns the exit status,
 * 128 + the signal, or RUN_TIMED_OUT. */
int foreign_run(struct foreign_run *run);
/* The same in two steps, for servers: start (sets run->pid), then wait for the end. */
void foreign_start(struct foreign_run *run);
int foreign_wait(struct foreign_run *run);

/* The file's contents, NUL-terminated (length in *len if not NULL); "" when missing. Free it. */
char *slurp(const char *path, size_t *len);
void spill(const char *path, const char *text);
/* text without its lines that start with "qaudit: " (the interposer's own). Free it. */
char *without_qaudit_lines(const char *text);
int count_lines_starting(const char *text, const char *prefix);

/* One process's totals as valgrind counts them (a realloc is an alloc and a free). */
struct process_totals {
    char name[64]; /* basename of argv[0] */
    long long allocs, frees;
    long long bytes; /* requested, reallocs' new sizes included: valgrind's "bytes allocated" */
};
/* From valgrind --log-file=DIR/vg.%p logs; from the exit dumps (reason "exit") among the *.json
 * files in DIR. Each returns how many it filled, sorted by name. */
size_t valgrind_totals(const char *dir, struct process_totals *out, size_t max);
size_t dump_totals(const char *dir, struct process_totals *out, size_t max);

const char *valgrind_path(void); /* valgrind.bin (Debian's, without its wrapper's env) */

#endif
