/* What a page and a system call cost a forked child on this machine (issue 19, point 6): FORKS
 * times, fork a child that writes one byte to each of PAGES pages it shares with its parent
 * (each a copy-on-write fault), makes CALLS getppid() calls, and _exits; prints the mean wall
 * time per fork in microseconds. Compare `fork_pages 1000 0 0` with `30 0` and `0 200`.
 * usage: fork_pages FORKS PAGES CALLS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fork_loop.h"

#define MAX_PAGES 256

static char shared[MAX_PAGES * 4096] __attribute__((aligned(4096)));

struct work {
    long pages, calls;
};

static void child(const void *arg)
{
    const struct work *w = arg;
    for (long p = 0; p < w->pages; p++)
        ((volatile char *)shared)[p * 4096] = 2;
    for (long c = 0; c < w->calls; c++)
        getppid();
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: fork_pages FORKS PAGES CALLS\n");
        return 2;
    }
    long forks = atol(argv[1]), pages = atol(argv[2]), calls = atol(argv[3]);
    if (forks <= 0 || pages < 0 || pages > MAX_PAGES || calls < 0) {
        fprintf(stderr, "fork_pages: FORKS > 0, PAGES 0 to %d, CALLS >= 0\n", MAX_PAGES);
        return 2;
    }
    memset(shared, 1, sizeof shared); /* present in the parent, so shared after each fork */
    double us = fork_loop("fork_pages", forks, child, &(struct work){pages, calls});
    if (us < 0)
        return 1;
    printf("%.1f\n", us);
    return 0;
}
