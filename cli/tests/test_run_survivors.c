/* run_survivors (cli/run_survivors.c): a process of the run is named however often it execs, and
 * when it wrote a process title over its environment. The test re-executes itself: in a chain of
 * execve that lasts until told to stop, scanned all the while (every scan must find the one
 * process), and under the preload as a program that sets its title as nginx does. */
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
#define TITLED_FLAG "--titled"
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

/* Starts this test again as `test_run_survivors FLAG FD_STOP FD_READY` with the settings
 * (NAME=VALUE, NULL-ended) added to its environment, once it said "ready" on FD_READY; its pid,
 * and in *stop the pipe's end whose closing tells it to end. The pipes are not close-on-exec:
 * a chain of images holds them. */
static pid_t start_self(const char *flag, char *const *settings, int *stop)
{
    int stop_pipe[2], ready[2];
    assert_int_equal(pipe(stop_pipe), 0);
    assert_int_equal(pipe(ready), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(stop_pipe[1]);
        close(ready[0]);
        char fd_stop[16], fd_ready[16];
        snprintf(fd_stop, sizeof fd_stop, "%d", stop_pipe[0]);
        snprintf(fd_ready, sizeof fd_ready, "%d", ready[1]);
        for (char *const *setting = settings; *setting != NULL; setting++)
            putenv(*setting);
        char *argv[] = {"test_run_survivors", (char *)flag, fd_stop, fd_ready, NULL};
        execv("/proc/self/exe", argv);
        _exit(1);
    }
    close(stop_pipe[0]);
    close(ready[1]);
    char byte;
    assert_int_equal(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    *stop = stop_pipe[1];
    return child;
}

static void a_process_that_execs_is_found_by_every_scan(void **state)
{
    (void)state;
    char run_id[64], setting[128];
    snprintf(run_id, sizeof run_id, "survivors-test-%d", (int)getpid());
    snprintf(setting, sizeof setting, "QAUDIT_RUN_ID=%s", run_id);
    char *settings[] = {setting, NULL};
    int stop; /* /proc/<pid>/environ holds the run's id from the first exec on */
    pid_t chain = start_self(CHAIN_FLAG, settings, &stop);
    int found_once = 0;
    for (int scan = 0; scan < SCANS; scan++) {
        pid_t pids[4];
        size_t n = run_survivors(run_id, pids, 4);
        found_once += n == 1 && pids[0] == chain;
        if (n != 1)
            fprintf(stderr, "scan %d found %zu processes of the run\n", scan, n);
    }
    close(stop);
    int status;
    assert_int_equal(waitpid(chain, &status, 0), chain);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* the chain ran to the end */
    assert_int_equal(found_once, SCANS);
}

#ifdef QAUDIT_PRELOAD /* not in the sanitizer build, which has no preload (cli/CMakeLists.txt) */
/* A program that sets its process title as nginx and PostgreSQL do: the title is written over
 * the environment's strings, which /proc/<pid>/environ then reads. It says so on fd_ready and
 * waits until fd_stop reads end of file. */
static int titled(const char *fd_stop, const char *fd_ready)
{
    extern char **environ;
    char *first = environ[0], *last = first;
    for (char **e = environ; *e != NULL; e++)
        last = *e;
    memset(first, 'x', (size_t)(last + strlen(last) - first));
    memcpy(first, "titled: worker process", 22);
    if (write(atoi(fd_ready), "r", 1) != 1)
        return 1;
    char byte;
    return read(atoi(fd_stop), &byte, 1) == 0 ? 0 : 1;
}

static void a_process_that_wrote_its_title_over_its_environment_is_found(void **state)
{
    (void)state;
    char dir[] = "/tmp/qaudit-survivors-XXXXXX", run_id[64];
    assert_non_null(mkdtemp(dir));
    snprintf(run_id, sizeof run_id, "titled-%d", (int)getpid());
    char preload[4200], out[4200], id[128];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", QAUDIT_PRELOAD);
    snprintf(out, sizeof out, "QAUDIT_OUT=%s/qaudit-%%p.json", dir);
    snprintf(id, sizeof id, "QAUDIT_RUN_ID=%s", run_id);
    char *settings[] = {preload, out, id, NULL};
    int stop;
    pid_t child = start_self(TITLED_FLAG, settings, &stop);
    char path[64], environment[256] = "";
    snprintf(path, sizeof path, "/proc/%d/environ", (int)child);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t got = fread(environment, 1, sizeof environment - 1, f);
    fclose(f);
    pid_t pids[4];
    size_t n = run_survivors(run_id, pids, 4);
    size_t others = run_survivors("titled-other-run", pids + 1, 3);
    close(stop);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    char command[4200];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    assert_int_equal(system(command), 0);
    assert_true(got > 0 && strncmp(environment, "titled: ", 8) == 0); /* the title is there */
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(n, 1);
    assert_int_equal(pids[0], child);
    assert_int_equal(others, 0);
}
#endif

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
#ifdef QAUDIT_PRELOAD
    if (argc == 4 && strcmp(argv[1], TITLED_FLAG) == 0)
        return titled(argv[2], argv[3]);
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_process_that_execs_is_found_by_every_scan),
#ifdef QAUDIT_PRELOAD
        cmocka_unit_test(a_process_that_wrote_its_title_over_its_environment_is_found),
#endif
        cmocka_unit_test(a_process_of_another_run_is_not_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
