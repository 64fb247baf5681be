/* A run's dumps made ready for a report: read and merged, symbolized (unless --no-symbols), the
 * allocation wrappers folded (the defaults and those the stacks show, unless --skip none, and
 * --skip's own): what qaudit report and qaudit diff both do. Each dump named may also be a
 * directory of dumps or a glob. */
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "reports/report.h"

/* The globs to fold: the defaults (unless --skip none; *defaults of them) followed by --skip's
 * own. */
static const char **skip_globs(const struct load_settings *s, size_t *count, size_t *defaults_out)
{
    size_t defaults = 0;
    while (s->skip_defaults && report_default_skip[defaults] != NULL)
        defaults++;
    *defaults_out = defaults;
    const char **globs = calloc(defaults + s->skip_count + 1, sizeof *globs);
    *count = 0;
    for (size_t i = 0; globs && i < defaults; i++)
        globs[(*count)++] = report_default_skip[i];
    for (size_t i = 0; globs && i < s->skip_count; i++)
        globs[(*count)++] = s->skip[i];
    return globs;
}

bool load_run(const char *const *paths, size_t count, const struct load_settings *s,
              struct report *r, char *error, size_t size)
{
    struct stat st;
    if (s->binary != NULL &&
        (access(s->binary, R_OK) != 0 || stat(s->binary, &st) != 0 || !S_ISREG(st.st_mode))) {
        snprintf(error, size, "--binary %s: cannot read it as a file", s->binary);
        return false;
    }
    if (report_load(paths, count, r, error, size) != REPORT_OK)
        return false;
    if (s->symbols &&
        report_symbolize(r, s->binary, s->debug_file, stderr, error, size) != REPORT_OK)
        return false;
    struct report_fold_settings fold = {.recognise = s->skip_defaults};
    const char **globs = skip_globs(s, &fold.glob_count, &fold.user_from);
    fold.globs = globs;
    report_fold(r, &fold);
    free(globs);
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* path added to list (a copy); false when memory ran out. */
static bool push_path(struct dump_list *list, const char *path)
{
    char **grown = realloc(list->paths, (list->count + 1) * sizeof *grown);
    if (grown == NULL)
        return false;
    list->paths = grown;
    if ((grown[list->count] = strdup(path)) == NULL)
        return false;
    list->count++;
    return true;
}

/* The dumps a directory holds: its *.json files, not the preload's unfinished .tmp. ones,
 * added in name order. */
static bool directory_dumps(const char *dir, struct dump_list *list, size_t *added)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return false;
    size_t first = list->count, len = strlen(dir);
    bool ok = true;
    char path[8200];
    const char *slash = len > 0 && dir[len - 1] == '/' ? "" : "/";
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0 || strstr(e->d_name, ".tmp."))
            continue;
        snprintf(path, sizeof path, "%s%s%s", dir, slash, e->d_name);
        ok = push_path(list, path);
    }
    closedir(d);
    *added = list->count - first;
    qsort(list->paths + first, *added, sizeof *list->paths, by_name);
    return ok;
}

bool expand_dumps(const char *arg, struct dump_list *list, char *error, size_t size)
{
    struct stat st;
    size_t added = 0;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (directory_dumps(arg, list, &added) && added > 0)
            return true;
        snprintf(error, size, "%s: a directory without dumps (*.json)", arg);
        return false;
    }
    glob_t g;
    if (stat(arg, &st) != 0 && strpbrk(arg, "*?[") != NULL) {
        if (glob(arg, 0, NULL, &g) != 0) {
            snprintf(error, size, "%s: no dump matches", arg);
            return false;
        }
        bool ok = true;
        for (size_t i = 0; ok && i < g.gl_pathc; i++)
            ok = push_path(list, g.gl_pathv[i]);
        globfree(&g);
        if (!ok)
            snprintf(error, size, "%s: out of memory listing its dumps", arg);
        return ok;
    }
    if (!push_path(list, arg)) {
        snprintf(error, size, "%s: out of memory", arg);
        return false;
    }
    return true;
}

void dump_list_free(struct dump_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->paths[i]);
    free(list->paths);
    *list = (struct dump_list){0};
}
