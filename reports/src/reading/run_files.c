/* Dumps of the given dumps' runs that were not given: a process of a `qaudit run` that could not
 * write where the run's dumps go (it dropped its privileges, or chrooted) wrote into the fallback
 * directory as qaudit-fallback-<run id>-<name>; qaudit run moves those it finds when its program
 * ends, and a daemon's later ones stay there. qaudit report takes them in when given a directory
 * or a glob (cli/dump_list.c); given dump files one by one, it names those it was not given, so
 * that nothing of a run is silently left out. */
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow_array.h"
#include "reports_reading.h"

#define NAMED_MAX 3 /* files named in the note; the rest counted */

static bool given(const char *path, const char *const *paths, size_t count)
{
    char want[PATH_MAX], have[PATH_MAX];
    if (realpath(path, want) == NULL)
        return false;
    for (size_t i = 0; i < count; i++)
        if (realpath(paths[i], have) != NULL && strcmp(want, have) == 0)
            return true;
    return false;
}

/* One note for one run's fallback directory, unless it was seen already. */
static void note_run(struct report *r, const struct report_process *p, const char *const *paths,
                     size_t count, char ***seen, size_t *seen_count, size_t *seen_capacity)
{
    char pattern[PATH_MAX];
    snprintf(pattern, sizeof pattern, "%s/qaudit-fallback-%s-*.json", p->fallback_dir, p->run_id);
    for (size_t i = 0; i < *seen_count; i++)
        if (strcmp((*seen)[i], pattern) == 0)
            return;
    char **slot = array_push(seen, seen_count, seen_capacity, sizeof *slot);
    if (slot != NULL)
        *slot = report_copy_string(pattern);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0)
        return;
    size_t left = 0;
    char names[3 * PATH_MAX] = "";
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (strstr(g.gl_pathv[i], ".tmp.") != NULL || given(g.gl_pathv[i], paths, count))
            continue;
        if (left++ < NAMED_MAX)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     left > 1 ? ", " : "", g.gl_pathv[i]);
    }
    globfree(&g);
    if (left > 0)
        report_push_string(
            &r->input_notes, &r->input_note_count, &r->input_note_capacity,
            "%zu more dump%s of run %s %s in %s (a process that could not write beside "
            "the others: a dropped user, a chroot), not given, not counted: %s%s "
            "(qaudit report of the run's directory takes them in).",
            left, left == 1 ? "" : "s", p->run_id, left == 1 ? "is" : "are", p->fallback_dir, names,
            left > NAMED_MAX ? ", ..." : "");
}

void report_run_files_note(struct report *r, const char *const *paths, size_t count)
{
    char **seen = NULL;
    size_t seen_count = 0, seen_capacity = 0;
    for (size_t i = 0; i < r->process_count; i++) {
        const struct report_process *p = &r->processes[i];
        if (p->run_id != NULL && p->fallback_dir != NULL && p->fallback_dir[0] == '/')
            note_run(r, p, paths, count, &seen, &seen_count, &seen_capacity);
    }
    for (size_t i = 0; i < seen_count; i++)
        free(seen[i]);
    free(seen);
}
