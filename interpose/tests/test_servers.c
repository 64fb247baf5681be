/* Debian's own servers as they really run (issue 19): nginx (a master and workers as www-data,
 * reload and quit), PostgreSQL 15 (initdb, pgbench, fast and immediate stop), memcached -u
 * memcache and node stopped by SIGTERM, each natively and under `qaudit run`. One group per
 * server (the first argument picks it; none runs all); a second argument picks tests by name
 * (a cmocka filter). The test makes itself a subreaper, so that the daemons it starts are its
 * children once their launchers exit, and none outlives it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>

#include <cmocka.h>

#include "servers.h"

int main(int argc, char **argv)
{
    const char *group = argc > 1 ? argv[1] : "all";
    if (argc > 2)
        cmocka_set_test_filter(argv[2]);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return 1;
    static const struct {
        const char *name;
        int (*run)(void);
    } groups[] = {{"nginx", servers_nginx},
                  {"postgres", servers_postgres},
                  {"memcached", servers_memcached},
                  {"node", servers_node}};
    int failed = 0;
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if (strcmp(group, "all") == 0 || strcmp(group, groups[i].name) == 0)
            failed += groups[i].run();
    return failed;
}
