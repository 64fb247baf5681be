/* The loop the fork benches share (fork_cost.c, fork_pages.c): FORKS times, fork, run the
 * child's work in the child (it must end the process, with status 0), and wait for it. */
#ifndef QAUDIT_BENCH_FORK_LOOP_H
#define QAUDIT_BENCH_FORK_LOOP_H

#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Mean wall microseconds per fork, or -1 once a fork or a child failed (said on stderr, after
 * the bench's name). */
static double fork_loop(const char *bench, long forks, void (*child)(const void *), const void *arg)
{
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 0; i < forks; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return -1;
        }
        if (pid == 0)
            child(arg);
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "%s: child %d failed\n", bench, (int)pid);
            return -1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double us = (end.tv_sec - start.tv_sec) * 1e6 + (end.tv_nsec - start.tv_nsec) / 1e3;
    return us / (double)forks;
}

#endif
