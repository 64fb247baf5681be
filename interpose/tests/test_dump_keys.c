/* Every key a dump holds is one of common/include/common/dump_keys.h's, the table the writer
 * (interpose/) and the readers (reports/) both name keys from: fixtures run under the preload in
 * the modes that write optional sections (stacks, sampling, injected failures, depth-one checks,
 * forks, a fatal signal, a program's own handler, usable sizes, the timeline, each allocator's
 * shim), and every object key of every dump is walked. The only keys not in the table are data:
 * an allocator family's entry points under precision.allocators.<family>.calls and
 * .attach_unreached, checked against interpose/src/extra_abi.h's QAUDIT_*_ENTRIES instead. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/dump_keys.h"
#include "extra_abi.h"
#include "harness.h"

#define KEY_NAME(id, key) key,
static const char *const table[] = {QA_DUMP_KEYS(KEY_NAME)};
#undef KEY_NAME
#define TABLE_SIZE (sizeof table / sizeof table[0])

#define ENTRY_NAME(id, name) name,
static const char *const jemalloc_entries[] = {QAUDIT_JEMALLOC_ENTRIES(ENTRY_NAME)};
static const char *const tcmalloc_entries[] = {QAUDIT_TCMALLOC_ENTRIES(ENTRY_NAME)};
static const char *const mimalloc_entries[] = {QAUDIT_MIMALLOC_ENTRIES(ENTRY_NAME)};
#undef ENTRY_NAME

static bool seen[TABLE_SIZE];

static bool in(const char *const *names, size_t count, const char *key, bool mark)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(names[i], key) == 0) {
            if (mark)
                seen[i] = true;
            return true;
        }
    return false;
}

/* key is one of family's entry points (an object under precision.allocators). */
static bool entry_of(const char *family, const char *key)
{
#define IN(list) in(list, sizeof list / sizeof list[0], key, false)
    if (strcmp(family, "jemalloc") == 0)
        return IN(jemalloc_entries);
    if (strcmp(family, "tcmalloc") == 0)
        return IN(tcmalloc_entries);
    if (strcmp(family, "mimalloc") == 0)
        return IN(mimalloc_entries);
#undef IN
    return false;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Walks value at path (dotted; "[]" for an array's items), failing on the first key that is
 * neither in the table nor an entry point where entry points are the keys. */
static void walk(json_t *value, const char *path, const char *family)
{
    if (json_is_array(value)) {
        char inner[512];
        snprintf(inner, sizeof inner, "%s[]", path);
        size_t i;
        json_t *item;
        json_array_foreach(value, i, item) walk(item, inner, family);
        return;
    }
    if (!json_is_object(value))
        return;
    /* precision.allocators.<family>.calls and .attach_unreached: keyed by entry point */
    bool entries =
        family != NULL && (ends_with(path, ".calls") || ends_with(path, ".attach_unreached"));
    const char *key;
    json_t *item;
    json_object_foreach(value, key, item)
    {
        char inner[512];
        snprintf(inner, sizeof inner, "%s.%s", path, key);
        if (entries && entry_of(family, key))
            continue;
        if (!in(table, TABLE_SIZE, key, true))
            fail_msg("%s: key \"%s\" is not in common/include/common/dump_keys.h", inner, key);
        bool is_family = strcmp(path, ".precision.allocators") == 0;
        walk(item, inner, is_family ? key : family);
    }
}

struct run {
    const char *argv[4];
    const char *extra[4];
    bool shim; /* LD_PRELOAD gets the family's shim after the preload (argv[0]'s allocator) */
};

static void walk_runs(const struct run *runs, size_t count)
{
    for (size_t r = 0; r < count; r++) {
        fresh_dir();
        const char *extra[6] = {NULL};
        char preload[700];
        size_t n = 0;
        if (runs[r].shim) {
            const char *family = strrchr(runs[r].argv[0], '_') + 1; /* fixture_alloc_<family> */
            snprintf(preload, sizeof preload, "LD_PRELOAD=%s:%s/libqaudit-%s.so",
                     test_preload_path(), FIXTURE_LIB_DIR, family);
            extra[n++] = preload;
        }
        for (size_t i = 0; runs[r].extra[i] != NULL; i++)
            extra[n++] = runs[r].extra[i];
        struct captured_run run = {.argv = runs[r].argv, .extra = extra, .preload = true};
        char out[4096];
        run_captured(&run, out, sizeof out);
        size_t dumps;
        json_t **all = load_all_dumps(&dumps);
        if (dumps == 0)
            fail_msg("%s %s left no dump", runs[r].argv[0], runs[r].argv[1] ? runs[r].argv[1] : "");
        for (size_t d = 0; d < dumps; d++)
            walk(all[d], "", NULL);
        free_dumps(all, dumps);
        remove_dir();
    }
}

static void test_every_key_is_in_the_table(void **state)
{
    (void)state;
    const struct run runs[] = {
        {{FIXTURE("fixture_queue_ring"), "depth9", NULL}, {"QAUDIT_STACKS=always", NULL}, false},
        {{FIXTURE("fixture_queue_ring"), "depth1", NULL},
         {"QAUDIT_ASSERT_DEPTH1=report", "QAUDIT_STACKS=fp", "QAUDIT_POISON=queue", NULL},
         false},
        {{FIXTURE("fixture_exact_counts"), NULL},
         {"QAUDIT_STACKS=sampled:64b", "QAUDIT_SEED=7", "QAUDIT_RUN_ID=keys", NULL},
         false},
        {{FIXTURE("fixture_exact_counts"), NULL},
         {"QAUDIT_FAIL=nth=3", "QAUDIT_STACKS=always", "PYTHONMALLOC=malloc", NULL},
         false},
        {{FIXTURE("fixture_forker"), NULL},
         {"QAUDIT_STACKS=always", "QAUDIT_UNWIND_CHECK=1", NULL},
         false},
        {{FIXTURE("fixture_endings"), "segv", NULL}, {NULL}, false},
        {{FIXTURE("fixture_endings"), "handler-exits", NULL}, {NULL}, false},
        {{FIXTURE("fixture_usable_sizes"), NULL}, {NULL}, false},
        {{FIXTURE("fixture_timeline"), NULL}, {"QAUDIT_TIMELINE=10", NULL}, false},
        {{FIXTURE("fixture_alloc_jemalloc"), NULL}, {NULL}, true},
        {{FIXTURE("fixture_alloc_tcmalloc"), NULL}, {NULL}, true},
        {{FIXTURE("fixture_alloc_mimalloc"), NULL}, {"QAUDIT_STACKS=always", NULL}, true},
    };
    walk_runs(runs, sizeof runs / sizeof runs[0]);
    /* Not vacuous: most of the table was met (the rest needs qaudit attach, a running writer
     * thread or deep queues: test_attach, test_snapshot and test_preload meet those). */
    size_t met = 0;
    for (size_t i = 0; i < TABLE_SIZE; i++)
        met += seen[i];
    print_message("%zu of the table's %zu keys met; not met:", met, TABLE_SIZE);
    for (size_t i = 0; i < TABLE_SIZE; i++)
        if (!seen[i])
            print_message(" %s", table[i]);
    print_message("\n");
    assert_true(met * 10 >= TABLE_SIZE * 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_key_is_in_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
