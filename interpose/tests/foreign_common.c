/* What the three groups of test_foreign share: a scratch directory per test, the environment
 * every run gets in full, and comparisons of native and preloaded output. */
#include <ftw.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "foreign_common.h"
#include "foreign_run.h"
#include "harness.h"

char work[256]; /* this test's directory, removed after it */

int make_work(void **state)
{
    (void)state;
    snprintf(work, sizeof work, "/tmp/qaudit-foreign-XXXXXX");
    return mkdtemp(work) ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int remove_work(void **state)
{
    (void)state;
    if (getenv("QAUDIT_KEEP_TEST_DIRS") == NULL)
        remove_tree(work);
    return 0;
}

/* work/name (made if missing) into buf. */
const char *in_work(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", work, name);
    mkdir(buf, 0700);
    return buf;
}

const char *const *base_env(struct env *e, const char *qaudit_out, bool preload)
{
    size_t n = 0;
    e->list[n++] = "PATH=/usr/bin:/bin";
    e->list[n++] = "LANG=C";
    e->list[n++] = "LC_ALL=C";
    e->list[n++] = "VALGRIND_LIB=/usr/libexec/valgrind";
    snprintf(e->text[0], sizeof e->text[0], "HOME=%s", work);
    snprintf(e->text[1], sizeof e->text[1], "TMPDIR=%s", work);
    snprintf(e->text[2], sizeof e->text[2], "QAUDIT_OUT=%s", qaudit_out);
    snprintf(e->text[3], sizeof e->text[3], "LD_PRELOAD=%s", test_preload_path());
    for (int i = 0; i < (preload ? 4 : 3); i++)
        e->list[n++] = e->text[i];
    /* In every run, preloaded or not: a program's own allocations follow its environment's size
     * (bash copies each variable), and valgrind's counts must be of the same program. */
    if (unwind_check_wanted()) {
        e->list[n++] = "QAUDIT_UNWIND_CHECK=1";
        e->list[n++] = "QAUDIT_STACKS=always";
    }
    e->list[n] = NULL;
    return e->list;
}

void assert_same_text(const char *what, const char *native, const char *preloaded)
{
    if (strcmp(native, preloaded) != 0)
        fail_msg("%s differs under the preload.\n--- native:\n%.2000s\n--- preloaded:\n%.2000s",
                 what, native, preloaded);
}

/* dir/name's contents (slurp). */
static char *slurp_in(const char *dir, const char *name, size_t *len)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return slurp(path, len);
}

/* The file work/run/name of two runs, byte for byte. */
void assert_same_file(const char *native_dir, const char *preload_dir, const char *name)
{
    size_t la, lb;
    char *x = slurp_in(native_dir, name, &la), *y = slurp_in(preload_dir, name, &lb);
    if (la == 0 || la != lb || memcmp(x, y, la) != 0)
        fail_msg("%s: %zu bytes natively, %zu under the preload, or different bytes", name, la, lb);
    free(x);
    free(y);
}

char *assert_same_output(const char *native_dir, const char *preload_dir, const char *out,
                         const char *err)
{
    char *native_out = slurp_in(native_dir, out, NULL),
         *preload_out = slurp_in(preload_dir, out, NULL);
    assert_same_text("stdout", native_out, preload_out);
    char *native_err = slurp_in(native_dir, err, NULL), *all_err = slurp_in(preload_dir, err, NULL);
    char *preload_err = without_qaudit_lines(all_err);
    assert_same_text("stderr", native_err, preload_err);
    free(native_out), free(preload_out), free(native_err), free(preload_err);
    return all_err;
}

/* ---- reading dumps */

json_t *dump_n(const char *dir, pid_t pid, int n)
{
    char path[700];
    snprintf(path, sizeof path, "%s/d-%d-%d.json", dir, (int)pid, n);
    return access(path, F_OK) == 0 ? load(path) : NULL;
}

const char *text_of(json_t *object, const char *key)
{
    const char *text = json_string_value(json_object_get(object, key));
    return text ? text : "";
}

const char *reason(json_t *dump)
{
    return text_of(dump, "reason");
}

long long requested_bucket(json_t *dump, long long from)
{
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(dump, "requested_sizes"), i, b)
    {
        if (json_integer_value(json_object_get(b, "from")) == from)
            return json_integer_value(json_object_get(b, "count"));
    }
    return 0;
}

bool unwind_check_wanted(void)
{
    const char *v = getenv("QAUDIT_UNWIND_CHECK");
    return v != NULL && strcmp(v, "1") == 0;
}

/* precision.unwind_check.KEY of a dump, -1 when absent. */
static long long unwind_figure(json_t *dump, const char *key)
{
    json_t *check = json_object_get(json_object_get(dump, "precision"), "unwind_check");
    json_t *v = json_object_get(check, key);
    return json_is_integer(v) ? json_integer_value(v) : -1;
}

void assert_unwinds_agree(const char *dir)
{
    if (!unwind_check_wanted())
        return;
    size_t n;
    json_t **dumps = load_dumps_in(dir, &n);
    long long compared = 0;
    for (size_t i = 0; i < n; i++) {
        long long stacks = unwind_figure(dumps[i], "stacks_compared");
        long long differed = unwind_figure(dumps[i], "stacks_differed");
        if (stacks < 0 || differed != 0)
            fail_msg("%s: a dump with %lld stacks compared, %lld differed (-1: no unwind_check)",
                     dir, stacks, differed);
        compared += stacks;
    }
    free_dumps(dumps, n);
    if (compared == 0)
        fail_msg("%s: %zu dumps, no stack compared", dir, n);
    print_message("unwind check: %lld stacks in %zu dumps, none differed\n", compared, n);
}
