/* Linked into every cmocka test (through the PkgConfig::CMOCKA target, tests/CMakeLists.txt) with
 * `-Wl,--wrap=_skip,--wrap=_cmocka_run_group_tests`, so that no test can pass by not running:
 *   - cmocka's skip() marks the test skipped and then exits 0 with everything else; here the
 *     group instead ends with exit 77, which ctest (SKIP_RETURN_CODE 77) reports as skipped, and
 *     `.ci/run` fails on (tests/no_skips.sh);
 *   - QAUDIT_TEST_FILTER=GLOB[,GLOB...] runs only the tests whose names match, as `make mutants`
 *     does to run the one test that catches a planted fault; a filter that matches nothing in a
 *     group runs nothing and also ends with 77, so a stale filter never reads as a pass.
 * Failures are returned as cmocka counts them, at most 76 (77 means skipped, and an exit status
 * wraps at 256). */
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SKIP_STATUS 77

void __real__skip(const char *const file, const int line);
int __real__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);
void __wrap__skip(const char *const file, const int line);
int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown);

static bool skipped;

void __wrap__skip(const char *const file, const int line)
{
    skipped = true;
    __real__skip(file, line);
}

/* Whether name matches one of the comma-separated globs of filter. */
static bool selected(const char *name, const char *filter)
{
    char globs[1024];
    snprintf(globs, sizeof globs, "%s", filter);
    for (char *save = NULL, *glob = strtok_r(globs, ",", &save); glob;
         glob = strtok_r(NULL, ",", &save))
        if (fnmatch(glob, name, 0) == 0)
            return true;
    return false;
}

/* The group's exit status: its failures, else 77 when a test skipped or none ran. */
static int status(int failed, bool none_ran)
{
    if (failed > 0)
        return failed < SKIP_STATUS ? failed : SKIP_STATUS - 1;
    return skipped || none_ran ? SKIP_STATUS : 0;
}

int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
                                   const size_t num_tests, CMFixtureFunction group_setup,
                                   CMFixtureFunction group_teardown)
{
    const char *filter = getenv("QAUDIT_TEST_FILTER");
    if (filter == NULL || filter[0] == '\0') {
        int failed = __real__cmocka_run_group_tests(group_name, tests, num_tests, group_setup,
                                                    group_teardown);
        return status(failed, false);
    }
    struct CMUnitTest *chosen = calloc(num_tests ? num_tests : 1, sizeof *chosen);
    if (chosen == NULL)
        return 1;
    size_t n = 0;
    for (size_t i = 0; i < num_tests; i++)
        if (selected(tests[i].name, filter))
            chosen[n++] = tests[i];
    printf("QAUDIT_TEST_FILTER=%s: %zu of %zu tests of %s\n", filter, n, num_tests, group_name);
    fflush(stdout);
    int failed =
        n == 0 ? 0
               : __real__cmocka_run_group_tests(group_name, chosen, n, group_setup, group_teardown);
    free(chosen);
    return status(failed, n == 0);
}
