/* The empirical prober: a child process with the allocator preloaded allocates blocks of each
 * size and reports what it got; the parent reads its lines. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/classes.h"

enum { BLOCKS = 64 };

static int compare_addresses(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return (x > y) - (x < y);
}

int probe_class_probe_child(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        char *end;
        unsigned long long size = strtoull(argv[i], &end, 10);
        if (*end != '\0' || size == 0)
            return 2;
        uintptr_t blocks[BLOCKS];
        size_t usable = 0;
        uintptr_t all = 0;
        for (int b = 0; b < BLOCKS; b++) {
            void *p = malloc(size);
            if (p == NULL)
                return 1;
            blocks[b] = (uintptr_t)p;
            all |= (uintptr_t)p;
            usable = malloc_usable_size(p);
        }
        qsort(blocks, BLOCKS, sizeof blocks[0], compare_addresses);
        uintptr_t stride = UINTPTR_MAX;
        for (int b = 1; b < BLOCKS; b++)
            if (blocks[b] - blocks[b - 1] < stride)
                stride = blocks[b] - blocks[b - 1];
        printf("%llu %zu %llu %llu\n", size, usable, (unsigned long long)stride,
               (unsigned long long)(all & -all));
        for (int b = 0; b < BLOCKS; b++)
            free((void *)blocks[b]);
    }
    return 0;
}

bool probe_class_probe(const char *self_exe, const char *library, const uint64_t *sizes, size_t n,
                       struct probe_result *out, char *error, size_t error_size)
{
    if (library != NULL && access(library, R_OK) != 0) {
        snprintf(error, error_size, "%s: %s", library, strerror(errno));
        return false;
    }
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) {
        snprintf(error, error_size, "pipe: %s", strerror(errno));
        return false;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipe_fds[1], 1);
        close(pipe_fds[0]);
        if (library != NULL)
            setenv("LD_PRELOAD", library, 1);
        else
            unsetenv("LD_PRELOAD");
        char **argv = calloc(n + 3, sizeof *argv);
        argv[0] = (char *)self_exe;
        argv[1] = "__probe-child";
        for (size_t i = 0; i < n; i++) {
            argv[i + 2] = malloc(24);
            snprintf(argv[i + 2], 24, "%" PRIu64, sizes[i]);
        }
        execv(self_exe, argv);
        _exit(127);
    }
    close(pipe_fds[1]);
    FILE *in = fdopen(pipe_fds[0], "r");
    size_t got = 0;
    unsigned long long size, usable, stride, align;
    while (got < n && fscanf(in, "%llu %llu %llu %llu", &size, &usable, &stride, &align) == 4)
        out[got++] = (struct probe_result){size, usable, stride, align};
    fclose(in);
    int status;
    waitpid(pid, &status, 0);
    if (got != n || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(error, error_size, "the probe child under %s stopped after %zu of %zu sizes",
                 library ? library : "glibc", got, n);
        return false;
    }
    return true;
}
