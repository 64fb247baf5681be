/* A run's dumps made ready for a report: read and merged, symbolized (unless --no-symbols), the
 * allocation wrappers folded (the defaults and those the stacks show, unless --skip none, and
 * --skip's own): what qaudit report and qaudit diff both do (dump_list.c picks the dumps). */
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
