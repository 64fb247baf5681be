/* What the groups of test_foreign share (foreign_common.c). */
#ifndef QAUDIT_FOREIGN_COMMON_H
#define QAUDIT_FOREIGN_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include <cmocka.h>

extern char work[256]; /* the running test's directory, removed after it */

int make_work(void **state);   /* cmocka setup: a fresh work directory */
int remove_work(void **state); /* cmocka teardown (QAUDIT_KEEP_TEST_DIRS keeps it) */
void remove_tree(const char *path);
/* work/name (made if missing) into buf. */
const char *in_work(char *buf, size_t size, const char *name);

/* The *_unwind_check test entries run with QAUDIT_UNWIND_CHECK=1 in the test's own environment:
 * then every preloaded run walks its `always` stacks both ways (docs/design.md, "Stacks in always
 * mode"), and assert_unwinds_agree fails unless every finished dump in dir compared stacks and
 * none differed (a no-op without the setting). */
bool unwind_check_wanted(void);
void assert_unwinds_agree(const char *dir);

/* The environment every run gets in full, so that native, preloaded and valgrind runs differ
 * only in LD_PRELOAD: valgrind.bin adds LD_PRELOAD (and VALGRIND_LIB for exec'd children). */
struct env {
    char text[8][700];
    const char *list[16];
};
const char *const *base_env(struct env *e, const char *qaudit_out, bool preload);

void assert_same_text(const char *what, const char *native, const char *preloaded);
/* The file name in two runs' directories, byte for byte. */
void assert_same_file(const char *native_dir, const char *preload_dir, const char *name);
/* Two runs' stdout (file out in each directory) and stderr (file err) are the same text, but for
 * the preloaded stderr's "qaudit: " lines; returns that whole stderr (free it). */
char *assert_same_output(const char *native_dir, const char *preload_dir, const char *out,
                         const char *err);

/* Reading dumps: dir/d-PID-N.json (NULL when missing); a string member ("" when missing); the
 * dump's reason; the count of requested_sizes' bucket starting at from. */
json_t *dump_n(const char *dir, pid_t pid, int n);
const char *text_of(json_t *object, const char *key);
const char *reason(json_t *dump);
long long requested_bucket(json_t *dump, long long from);

#define FOREIGN_TEST(f) cmocka_unit_test_setup_teardown(f, make_work, remove_work)

/* The groups, each run by test_foreign GROUP: the number of failed tests. */
int foreign_programs(void);
int foreign_host(void);
int foreign_stress(void);

#endif
