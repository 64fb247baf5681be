/* Fork cost (issue 19, point 6): FORKS times, fork a child that makes ten allocations and exits,
 * and wait for it; prints the mean wall time per fork in microseconds. bench/fork_bench.sh runs
 * it natively and under `qaudit run` in its default mode.
 * With DIR, each child also creates one file of 4 KiB there before it exits, natively: what
 * leaving one small file per process costs on that file system, whoever writes it (the floor of
 * any tool that leaves a dump per process).
 * usage: fork_cost [FORKS] [LIVE] [DIR]   (defaults 2000 and 2000: blocks the parent holds live,
 * as a server's master holds its configuration, which every child inherits; no DIR) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fork_loop.h"

/* A new file of 4 KiB in dir, created and written as a dump is (O_EXCL, one write). */
static int write_one_file(const char *dir)
{
    static char text[4096];
    char path[4096];
    snprintf(path, sizeof path, "%s/f-%d.json", dir, (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return 1;
    int failed = write(fd, text, sizeof text) != (ssize_t)sizeof text;
    return close(fd) != 0 || failed;
}

/* The child's work: ten allocations, as a small request would make; exit() (not _exit), as a
 * worker or backend ends. */
static void child(const void *dir)
{
    void *volatile blocks[10];
    for (int i = 0; i < 10; i++)
        blocks[i] = malloc(16u << (i % 6));
    for (int i = 0; i < 10; i += 2)
        free(blocks[i]);
    exit(dir != NULL ? write_one_file(dir) : 0);
}

int main(int argc, char **argv)
{
    long forks = argc > 1 ? atol(argv[1]) : 2000;
    long live = argc > 2 ? atol(argv[2]) : 2000;
    const char *dir = argc > 3 ? argv[3] : NULL;
    void *volatile *held = calloc((size_t)live + 1, sizeof *held);
    for (long i = 0; i < live; i++)
        held[i] = malloc(32 + (size_t)(i % 8) * 48);
    double us = fork_loop("fork_cost", forks, child, dir);
    if (us < 0)
        return 1;
    printf("%.1f\n", us);
    return 0;
}
