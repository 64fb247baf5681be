/* run_survivors (cli/run_survivors.c): a process of the run is named however often it execs.
 * The test re-executes itself in a chain of execve that lasts until told to stop, and scans
 * for the run's processes all the while: every scan must find the one process. */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

#define CHAIN_FLAG "--exec-chain"
#define SCANS 300

/* One link of the chain, an image exec'd with the run's id in its environment: the first says so
 * on the ready pipe (fd_ready, -1 in the others), then each execs the next until the stop pipe
 * (fd_stop) reads end of file. */
static int exec_chain(const char *fd_stop, const char *fd_ready)
{
    int ready = atoi(fd_ready);
    if (ready >= 0 && (write(ready, "r", 1) != 1 || close(ready) != 0))
        return 1;
    struct pollfd stop = {.fd = atoi(fd_stop), .events = POLLIN};
    if (poll(&stop, 1, 0) > 0)
        return 0;
    char *next[] = {"test_run_survivors", CHAIN_FLAG, (char *)fd_stop, "-1", NULL};
    execv("/proc/self/exe", next);
    return 1;
}

static void a_process_that_execs_is_found_by_every_scan(void **state)
{
    (void)state;
    char run_id[64];
    snprintf(run_id, sizeof run_id, "survivors-test-%d", (int)getpid());
    int stop[2], ready[2]; /* not close-on-exec: the links of the chain hold them */
    assert_int_equal(pipe(stop), 0);
    assert_int_equal(pipe(ready), 0);
    pid_t chain = fork();
    assert_true(chain >= 0);
    if (chain == 0) {
        close(stop[1]);
        close(ready[0]);
        char fd_stop[16], fd_ready[16];
        snprintf(fd_stop, sizeof fd_stop, "%d", stop[0]);
        snprintf(fd_ready, sizeof fd_ready, "%d", ready[1]);
        setenv("QAUDIT_RUN_ID", run_id, 1);
        char *first[] = {"test_run_survivors", CHAIN_FLAG, fd_stop, fd_ready, NULL};
        execv("/proc/self/exe", first);
        _exit(1);
    }
    close(stop[0]);
    close(ready[1]);
    char byte; /* /proc/<pid>/environ holds the run's id from the first exec on */
    assert_int_equal(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    int found_once = 0;
    for (int scan = 0; scan < SCANS; scan++) {
        pid_t pids[4];
        size_t n = run_survivors(run_id, pids, 4);
        found_once += n == 1 && pids[0] == chain;
        if (n != 1)
            fprintf(stderr, "scan %d found %zu processes of the run\n", scan, n);
    }
    close(stop[1]);
    int status;
    assert_int_equal(waitpid(chain, &status, 0), chain);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* the chain ran to the end */
    assert_int_equal(found_once, SCANS);
}

static void a_process_of_another_run_is_not_named(void **state)
{
    (void)state;
    pid_t pids[4];
    assert_int_equal(run_survivors("no-such-run", pids, 4), 0);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], CHAIN_FLAG) == 0)
        return exec_chain(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_process_that_execs_is_found_by_every_scan),
        cmocka_unit_test(a_process_of_another_run_is_not_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
