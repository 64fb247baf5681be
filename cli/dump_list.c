/* The dumps a report or a diff reads. A file named alone is read as a dump (reading it says why
 * it is not one); a directory or a glob stands for the dumps among its files, told by their
 * content (reports/dump_head.h: a JSON object whose "format" is qaudit-alloc/...), so a log or
 * any other file beside them is passed over, as qaudit run's summary passes it over. Such a set
 * also stands for its runs: the dumps of the same run id in the run's fallback directory, written
 * by processes that could not write beside the others (a worker that dropped root), are taken in
 * and said on stderr. --run, --pid and --program then narrow the set down. */
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "common/grow_array.h"
#include "qaudit/control.h"
#include "reports/dump_head.h"

#define NAMED_IN_ERROR 8 /* pids, programs or runs named when nothing matched */

static char *copy(const char *text)
{
    return strdup(text ? text : "");
}

/* The file name of path. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void entry_free(struct dump_entry *e)
{
    free(e->path);
    free(e->exe);
    free(e->argv0);
    free(e->fallback_dir);
}

/* path added to list with what its head says (a copy of each); false when memory ran out. */
static bool push_entry(struct dump_list *list, const char *path, const struct report_dump_head *h,
                       bool from_set)
{
    if (!array_reserve(&list->entries, &list->entry_capacity, list->count + 1,
                       sizeof *list->entries) ||
        !array_reserve(&list->paths, &list->path_capacity, list->count + 2, sizeof *list->paths))
        return false;
    struct dump_entry *e = &list->entries[list->count];
    *e = (struct dump_entry){.path = copy(path),
                             .known = h != NULL,
                             .from_set = from_set,
                             .pid = h ? h->pid : 0,
                             .exe = copy(h ? h->exe : ""),
                             .argv0 = copy(h ? h->argv0 : ""),
                             .fallback_dir = copy(h ? h->fallback_dir : "")};
    if (h != NULL)
        snprintf(e->run_id, sizeof e->run_id, "%s", h->run_id);
    if (e->path == NULL || e->exe == NULL || e->argv0 == NULL || e->fallback_dir == NULL) {
        entry_free(e);
        return false;
    }
    list->paths[list->count++] = e->path;
    list->paths[list->count] = NULL;
    return true;
}

/* path added when it is a dump; false when memory ran out. */
static bool push_if_dump(struct dump_list *list, const char *path, size_t *added)
{
    struct report_dump_head *h = malloc(sizeof *h);
    if (h == NULL)
        return false;
    bool ok = true;
    if (report_dump_head(path, h)) { /* one given twice is counted once by report_load */
        ok = push_entry(list, path, h, true);
        *added += ok;
    }
    free(h);
    return ok;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct dump_entry *)a)->path, ((const struct dump_entry *)b)->path);
}

/* Entries from first on in name order, the paths following them. */
static void sort_from(struct dump_list *list, size_t first)
{
    qsort(list->entries + first, list->count - first, sizeof *list->entries, by_path);
    for (size_t i = first; i < list->count; i++)
        list->paths[i] = list->entries[i].path;
}

/* The dumps among a directory's files, added in name order. */
static bool directory_dumps(const char *dir, struct dump_list *list, size_t *added)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return false;
    size_t first = list->count, len = strlen(dir);
    bool ok = true;
    char path[PATH_MAX + 256];
    const char *slash = len > 0 && dir[len - 1] == '/' ? "" : "/";
    for (struct dirent *e; ok && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || strcmp(e->d_name, "..") == 0))
            continue;
        snprintf(path, sizeof path, "%s%s%s", dir, slash, e->d_name);
        ok = push_if_dump(list, path, added);
    }
    closedir(d);
    sort_from(list, first);
    return ok;
}

bool expand_dumps(const char *arg, struct dump_list *list, char *error, size_t size)
{
    struct stat st;
    size_t added = 0;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (directory_dumps(arg, list, &added) && added > 0)
            return true;
        snprintf(error, size, "%s: a directory without dumps (files of format qaudit-alloc/1)",
                 arg);
        return false;
    }
    glob_t g;
    if (stat(arg, &st) != 0 && strpbrk(arg, "*?[") != NULL) {
        if (glob(arg, 0, NULL, &g) != 0) {
            snprintf(error, size, "%s: no dump matches", arg);
            return false;
        }
        bool ok = true;
        for (size_t i = 0; ok && i < g.gl_pathc; i++) { /* a directory matched: its dumps */
            struct stat matched;
            bool dir = stat(g.gl_pathv[i], &matched) == 0 && S_ISDIR(matched.st_mode);
            ok = dir ? directory_dumps(g.gl_pathv[i], list, &added)
                     : push_if_dump(list, g.gl_pathv[i], &added);
        }
        globfree(&g);
        if (ok && added > 0)
            return true;
        snprintf(error, size,
                 ok ? "%s: no dump matches (no file of format qaudit-alloc/1)"
                    : "%s: cannot list its dumps",
                 arg);
        return false;
    }
    struct report_dump_head *h = malloc(sizeof *h);
    bool known = h != NULL && report_dump_head(arg, h);
    bool ok = h != NULL && push_entry(list, arg, known ? h : NULL, false);
    free(h);
    if (!ok)
        snprintf(error, size, "%s: out of memory", arg);
    return ok;
}

/* Whether the list holds the file at path (under any name: a link, a path through another
 * directory). Only entries of the same file name are resolved. */
static bool holds(const struct dump_list *list, const char *path)
{
    char want[PATH_MAX], have[PATH_MAX];
    if (realpath(path, want) == NULL)
        return false;
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(base_name(list->entries[i].path), base_name(want)) == 0 &&
            realpath(list->entries[i].path, have) != NULL && strcmp(want, have) == 0)
            return true;
    return false;
}

/* Whether entries before i hold the run and fallback directory of entry i. */
static bool run_seen(const struct dump_list *list, size_t i)
{
    const struct dump_entry *e = &list->entries[i];
    for (size_t j = 0; j < i; j++)
        if (list->entries[j].from_set && strcmp(list->entries[j].run_id, e->run_id) == 0 &&
            strcmp(list->entries[j].fallback_dir, e->fallback_dir) == 0)
            return true;
    return false;
}

/* The run's dumps in its fallback directory that the list does not hold, added; how many. */
static size_t take_run(struct dump_list *list, const char *run_id, const char *dir)
{
    char pattern[PATH_MAX + 128];
    snprintf(pattern, sizeof pattern, "%s/" QAUDIT_FALLBACK_PREFIX "%s-*", dir, run_id);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        return 0;
    size_t first = list->count, added = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct report_dump_head *h = malloc(sizeof *h);
        bool take = h != NULL && report_dump_head(g.gl_pathv[i], h) &&
                    strcmp(h->run_id, run_id) == 0 && !holds(list, g.gl_pathv[i]);
        if (take && push_entry(list, g.gl_pathv[i], h, false))
            added++;
        free(h);
    }
    globfree(&g);
    sort_from(list, first);
    return added;
}

size_t dump_list_take_fallbacks(struct dump_list *list, const char *command)
{
    size_t total = 0, sets = list->count;
    for (size_t i = 0; i < sets; i++) {
        const struct dump_entry *e = &list->entries[i];
        if (!e->from_set || e->run_id[0] == '\0' || e->fallback_dir[0] != '/' || run_seen(list, i))
            continue;
        char run_id[sizeof e->run_id], dir[PATH_MAX];
        snprintf(run_id, sizeof run_id, "%s", e->run_id);
        snprintf(dir, sizeof dir, "%s", e->fallback_dir);
        size_t added = take_run(list, run_id, dir); /* may move the entries */
        if (added > 0)
            fprintf(stderr,
                    "qaudit %s: %zu dump%s of run %s taken in from %s (%s of the run that could "
                    "not write beside the others: a dropped user, a chroot)\n",
                    command, added, added == 1 ? "" : "s", run_id, dir,
                    added == 1 ? "a process" : "processes");
        total += added;
    }
    return total;
}

static bool pid_wanted(const struct dump_filter *f, uint64_t pid)
{
    for (size_t i = 0; i < f->pid_count; i++)
        if ((uint64_t)f->pids[i] == pid)
            return true;
    return f->pid_count == 0;
}

static bool program_wanted(const struct dump_filter *f, const struct dump_entry *e)
{
    for (size_t i = 0; i < f->program_count; i++)
        if (report_program_matches(e->exe, e->argv0, f->programs[i]))
            return true;
    return f->program_count == 0;
}

static bool entry_wanted(const struct dump_filter *f, const struct dump_entry *e)
{
    if (!e->known)
        return true; /* not a dump: reading it says why */
    return (f->run == NULL || strcmp(e->run_id, f->run) == 0) && pid_wanted(f, e->pid) &&
           program_wanted(f, e);
}

/* What the dumps read are, for the line that says nothing matched: their pids, programs or
 * runs, each once, the first NAMED_IN_ERROR. */
static void list_values(const struct dump_list *list, int what, char *out, size_t size)
{
    size_t used = 0, named = 0;
    out[0] = '\0';
    for (size_t i = 0; i < list->count && used + 1 < size; i++) {
        const struct dump_entry *e = &list->entries[i];
        char value[PATH_MAX];
        if (what == 'p')
            snprintf(value, sizeof value, "%llu", (unsigned long long)e->pid);
        else
            snprintf(value, sizeof value, "%s",
                     what == 'r' ? (e->run_id[0] ? e->run_id : "none") : base_name(e->exe));
        bool again = false;
        for (size_t j = 0; j < i && !again; j++) {
            char before[PATH_MAX];
            const struct dump_entry *b = &list->entries[j];
            if (what == 'p')
                snprintf(before, sizeof before, "%llu", (unsigned long long)b->pid);
            else
                snprintf(before, sizeof before, "%s",
                         what == 'r' ? (b->run_id[0] ? b->run_id : "none") : base_name(b->exe));
            again = strcmp(before, value) == 0;
        }
        if (again)
            continue;
        if (named++ == NAMED_IN_ERROR) {
            snprintf(out + used, size - used, ", ...");
            return;
        }
        used += (size_t)snprintf(out + used, size - used, "%s%s", named > 1 ? ", " : "", value);
    }
}

/* The one line for a filter nothing matched. */
static void no_match(const struct dump_list *list, const struct dump_filter *f, char *error,
                     size_t size)
{
    char asked[512] = "", values[1024];
    size_t used = 0;
    int what = f->run ? 'r' : f->pid_count ? 'p' : 'x';
    if (f->run)
        used += (size_t)snprintf(asked + used, sizeof asked - used, " --run %s", f->run);
    for (size_t i = 0; i < f->pid_count && used < sizeof asked; i++)
        used += (size_t)snprintf(asked + used, sizeof asked - used, " --pid %ld", f->pids[i]);
    for (size_t i = 0; i < f->program_count && used < sizeof asked; i++)
        used +=
            (size_t)snprintf(asked + used, sizeof asked - used, " --program %s", f->programs[i]);
    list_values(list, what, values, sizeof values);
    snprintf(error, size, "no dump matches%s among the %zu read (%s: %s)", asked, list->count,
             what == 'r'   ? "their runs"
             : what == 'p' ? "their pids"
                           : "their programs",
             values);
}

bool dump_list_narrow(struct dump_list *list, const struct dump_filter *f, char *error, size_t size)
{
    size_t kept = 0, known = 0;
    bool any = false;
    for (size_t i = 0; i < list->count; i++) {
        known += list->entries[i].known;
        any |= list->entries[i].known && entry_wanted(f, &list->entries[i]);
    }
    if (!any && known > 0) {
        no_match(list, f, error, size);
        return false;
    }
    for (size_t i = 0; i < list->count; i++) {
        if (entry_wanted(f, &list->entries[i]))
            list->entries[kept++] = list->entries[i];
        else
            entry_free(&list->entries[i]);
    }
    list->count = kept;
    for (size_t i = 0; i < kept; i++)
        list->paths[i] = list->entries[i].path;
    if (list->paths != NULL)
        list->paths[kept] = NULL;
    return true;
}

bool dump_list_pick(struct dump_list *list, const struct dump_filter *f, const char *command,
                    char *error, size_t size)
{
    struct dump_filter by_run = {.run = f->run};
    if (f->run != NULL && !dump_list_narrow(list, &by_run, error, size))
        return false;
    dump_list_take_fallbacks(list, command);
    struct dump_filter rest = *f;
    rest.run = NULL;
    return rest.pid_count + rest.program_count == 0 || dump_list_narrow(list, &rest, error, size);
}

void dump_list_free(struct dump_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        entry_free(&list->entries[i]);
    free(list->entries);
    free(list->paths);
    *list = (struct dump_list){0};
}
