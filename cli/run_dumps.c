/* The other dumps of a qaudit run: those the program's earlier images (before its last exec) and
 * the processes it started (forked children, programs they exec'd) wrote under the pattern's
 * names, for any pid and sequence, with the suffixes the preload gives a name another holds.
 * Files that are no dumps there (a log named like them) are passed over, told by their content
 * (reports/dump_head.h); dumps of other runs left under the same names (the default pattern puts
 * every run in the current directory) are told by their run id (process.run_id). */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reports/dump_head.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The pattern's names for any pid: the plain glob's and the variants' files, each once. */
static bool pattern_files(const char *pattern, glob_t *g)
{
    char plain[4096], variants[4200];
    dump_path_globs(pattern, -1, plain, variants, sizeof plain);
    int first = glob(plain, 0, NULL, g);
    int second = glob(variants, first == 0 ? GLOB_APPEND : 0, NULL, g);
    if (first != 0 && second != 0)
        return false;
    qsort(g->gl_pathv, g->gl_pathc, sizeof *g->gl_pathv, by_name);
    return true;
}

bool run_dumps_find(const char *pattern, const char *own, pid_t program, const char *run_id,
                    struct run_dumps *out)
{
    memset(out, 0, sizeof *out);
    glob_t g;
    if (!pattern_files(pattern, &g))
        return false;
    out->paths = calloc(g.gl_pathc + 1, sizeof *out->paths);
    struct report_dump_head *h = malloc(sizeof *h);
    uint64_t own_start = h != NULL && report_dump_head(own, h) ? h->start_time_ns : 0;
    for (size_t i = 0; out->paths != NULL && h != NULL && i < g.gl_pathc; i++) {
        const char *path = g.gl_pathv[i];
        if ((i > 0 && strcmp(path, g.gl_pathv[i - 1]) == 0) || strcmp(path, own) == 0 ||
            !report_dump_head(path, h) || strcmp(h->run_id, run_id) != 0)
            continue; /* seen, the program's own, no dump, or another run's */
        if ((out->paths[out->count] = strdup(path)) == NULL)
            continue;
        out->count++;
        out->started += h->pid != (uint64_t)program; /* else an image before its last exec, or
                                                        a snapshot */
        out->own_image += h->pid == (uint64_t)program && h->start_time_ns == own_start;
    }
    free(h);
    globfree(&g);
    return out->started > 0;
}

void run_dumps_free(struct run_dumps *d)
{
    for (size_t i = 0; i < d->count; i++)
        free(d->paths[i]);
    free(d->paths);
    memset(d, 0, sizeof *d);
}
