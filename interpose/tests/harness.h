/* The preload tests' shared harness (harness.c). */
#ifndef QAUDIT_PRELOAD_HARNESS_H
#define QAUDIT_PRELOAD_HARNESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define FIXTURE(name) FIXTURE_DIR "/" name

extern char dump_dir[256];

/* The preload under test: QAUDIT_TEST_PRELOAD (ctest's runs against the -DQA_DEBUG build set it),
 * else the one this build made (PRELOAD_PATH). */
const char *test_preload_path(void);

void fresh_dir(void);
void remove_dir(void);
/* Starts argv under the preload with QAUDIT_OUT=<dump_dir>/dump-%p.json plus extra "K=V"
 * settings; returns its pid. */
pid_t start(const char *const *argv, const char *const *extra);
/* The exit status, or 128 + the signal that ended it. */
int wait_exit(pid_t pid);
/* Returns once pid, a child of this process, catches signo (/proc/PID/status SigCgt: the preload
 * installs its dump signal's handler at start-up, before main), which is when a dump signal can
 * be sent; fails when pid ends first, or after 60 s. Readiness, not a sleep. */
void wait_catching(pid_t pid, int signo);
json_t *load(const char *path);
json_t *load_pid(pid_t pid); /* <dump_dir>/dump-PID.json */
/* start(argv, extra), asserting a clean exit 0; its dump (load_pid). */
json_t *run_preloaded(const char *const *argv, const char *const *extra);
long long num(json_t *root, const char *path); /* the integer at a dotted path */
json_t *check_named(json_t *root, const char *name);
bool passed(json_t *root, const char *name);
long long sum_over_sites(json_t *root, const char *field);
json_t *site_with(json_t *root, const char *field, long long value);
int count_dumps(void); /* finished dump-* files in dump_dir */
void preload_then_jemalloc(char *setting, size_t size);

/* A program run to its end by run_captured. */
struct captured_run {
    const char *const *argv;
    const char *const *extra; /* "K=V" settings, NULL-terminated, or NULL */
    bool preload;             /* under libqaudit-preload.so, or natively */
    const char *out_name;     /* QAUDIT_OUT inside dump_dir (default dump-%p.json) */
    bool out_relative;        /* QAUDIT_OUT=out_name as given, relative to dir */
    const char *dir;          /* working directory, or NULL */
};
int run_captured(const struct captured_run *run, char *out, size_t size);
json_t **load_all_dumps(size_t *count);                 /* every finished *.json in dump_dir */
json_t **load_dumps_in(const char *dir, size_t *count); /* every finished *.json in dir */
void free_dumps(json_t **dumps, size_t count);
int free_port(void);       /* on 127.0.0.1, held until this process exits (harness.c) */
bool redis_ping(int port); /* 127.0.0.1:port answers PING with +PONG */
const char *str_at(json_t *root, const char *object, const char *key); /* root.object.key */

#endif
