/* The preload tests' shared harness (harness.c). */
#ifndef QAUDIT_PRELOAD_HARNESS_H
#define QAUDIT_PRELOAD_HARNESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define FIXTURE(name) FIXTURE_DIR "/" name

extern char dump_dir[256];

void fresh_dir(void);
void remove_dir(void);
/* Starts argv under the preload with QAUDIT_OUT=<dump_dir>/dump-%p.json plus extra "K=V"
 * settings; returns its pid. */
pid_t start(const char *const *argv, const char *const *extra);
/* The exit status, or 128 + the signal that ended it. */
int wait_exit(pid_t pid);
json_t *load(const char *path);
json_t *load_pid(pid_t pid); /* <dump_dir>/dump-PID.json */
long long num(json_t *root, const char *path); /* the integer at a dotted path */
json_t *check_named(json_t *root, const char *name);
bool passed(json_t *root, const char *name);
long long sum_over_sites(json_t *root, const char *field);
json_t *site_with(json_t *root, const char *field, long long value);
int count_dumps(void); /* finished dump-* files in dump_dir */
void preload_then_jemalloc(char *setting, size_t size);

#endif
