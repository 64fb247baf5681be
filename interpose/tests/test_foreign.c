/* Proof on programs nobody here wrote (issue 12, point 7), in three groups (the first argument
 * picks one; none runs all):
 * - programs: Debian's bash, python3, perl, git, gcc and redis-server under the preload print
 *   and exit exactly as natively (the interposer's own "qaudit: " lines aside), and their dumps
 *   agree process by process with valgrind's totals or with the program's own counters;
 * - host: the host-safety repros of points 1 and 4 (fds 3 and 4, close_range, dup2 over every
 *   fd, a double-fork daemon, the dump signal claimed by the program, one file per process);
 * - stress: fixture_stress under every stack mode: no crash, no hang, its own counts exact.
 * A second argument picks tests by name (a cmocka filter: test_stress_fp, test_*daemon*). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "foreign_common.h"

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
    if (argc > 2)
        cmocka_set_test_filter(argv[2]); /* a test name or a glob, for one case */
    bool all = strcmp(group, "all") == 0;
    int failed = 0;
    if (all || strcmp(group, "programs") == 0)
        failed += foreign_programs();
    if (all || strcmp(group, "host") == 0)
        failed += foreign_host();
    if (all || strcmp(group, "stress") == 0)
        failed += foreign_stress();
    return failed;
}
