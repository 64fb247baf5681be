/* qaudit classes: allocator size classes for raw sizes, modelled and probed. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "probe/classes.h"

static const char classes_usage[] =
    "usage: qaudit classes [--probe [LIB.so]] SIZE...\n"
    "  The class (bytes reserved), usable size and waste of each SIZE under the glibc,\n"
    "  mimalloc, jemalloc and tcmalloc models. With --probe, a child with LIB.so preloaded (the C\n"
    "  library's allocator when no LIB is given) allocates blocks of each size and reports usable\n"
    "  size, stride and alignment, and whether the model agrees (exit 1 when it does not).\n";

/* Which model describes library (by file name), or glibc for the C library. */
static enum allocator model_for(const char *library)
{
    if (library == NULL)
        return ALLOC_GLIBC;
    for (int a = 1; a < ALLOC_COUNT; a++)
        if (strstr(library, probe_class_models[a].name))
            return (enum allocator)a;
    return ALLOC_COUNT;
}

int command_classes(int argc, char **argv)
{
    bool probe = false;
    const char *library = NULL;
    uint64_t *sizes = calloc((size_t)argc, sizeof *sizes);
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            fputs(classes_usage, stdout);
            free(sizes);
            return 0;
        }
        if (strcmp(argv[i], "--probe") == 0) {
            probe = true;
            if (i + 1 < argc && strstr(argv[i + 1], ".so"))
                library = argv[++i];
            continue;
        }
        if (argv[i][0] == '-') {
            static const struct option options[] = {
                {"probe", optional_argument, NULL, 0}, {"help", no_argument, NULL, 0}, {0}};
            optind = i + 1; /* option_error names argv[optind - 1] */
            optopt = argv[i][1];
            free(sizes);
            return option_error("classes", '?', argv, options);
        }
        char *end;
        unsigned long long v = strtoull(argv[i], &end, 10);
        if (*end != '\0' || v == 0 || v > (1ull << 30) || argv[i][0] == '-') {
            fprintf(stderr, "qaudit classes: '%s' is not a size from 1 to 1073741824\n", argv[i]);
            free(sizes);
            return 2;
        }
        sizes[n++] = v;
    }
    if (n == 0) {
        free(sizes);
        return usage_error("classes", "expected at least one SIZE");
    }
    printf("%10s", "size");
    for (int a = 0; a < ALLOC_COUNT; a++)
        printf(" | %-19s", probe_class_models[a].name);
    printf("\n%10s", "");
    for (int a = 0; a < ALLOC_COUNT; a++)
        printf(" | %-19s", "class/usable/waste");
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        printf("%10llu", (unsigned long long)sizes[i]);
        for (int a = 0; a < ALLOC_COUNT; a++) {
            struct size_class c;
            probe_class_of((enum allocator)a, sizes[i], &c);
            char cell[64];
            snprintf(cell, sizeof cell, "%llu/%llu/%llu", (unsigned long long)c.reserved,
                     (unsigned long long)c.usable, (unsigned long long)(c.reserved - sizes[i]));
            printf(" | %-19s", cell);
        }
        printf("\n");
    }
    int status = 0;
    if (probe) {
        enum allocator model = model_for(library);
        struct probe_result *results = calloc(n, sizeof *results);
        char error[512];
        if (!probe_class_probe("/proc/self/exe", library, sizes, n, results, error, sizeof error)) {
            fprintf(stderr, "qaudit classes: %s\n", error);
            free(results);
            free(sizes);
            return 2;
        }
        printf("\nprobe: %s (model: %s)\n", library ? library : "the C library's malloc",
               model < ALLOC_COUNT ? probe_class_models[model].version : "none");
        printf("%10s | %8s | %8s | %6s | %s\n", "size", "usable", "stride", "align", "model");
        for (size_t i = 0; i < n; i++) {
            struct size_class c;
            bool agrees = model < ALLOC_COUNT && probe_class_of(model, sizes[i], &c) &&
                          c.usable == results[i].usable;
            printf("%10llu | %8llu | %8llu | %6llu | %s\n", (unsigned long long)sizes[i],
                   (unsigned long long)results[i].usable, (unsigned long long)results[i].stride,
                   (unsigned long long)results[i].align, agrees ? "agrees" : "DIFFERS");
            if (!agrees)
                status = 1;
        }
        free(results);
    }
    free(sizes);
    return status;
}
