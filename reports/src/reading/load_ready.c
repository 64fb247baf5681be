/* Dumps made ready for a report: read and merged, symbolized (unless --no-symbols), the
 * allocation wrappers folded (the defaults and those the stacks show, unless --skip none, and
 * --skip's own): what qaudit report, diff and gate do with the dumps cli/dump_list.c picks, and
 * what qaudit serve's pprof endpoint does, so that its top sites are the report's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports_reading.h"

/* The globs to fold: the defaults (unless --skip none; *defaults of them) followed by --skip's
 * own. */
static const char **skip_globs(const struct report_load_settings *s, size_t *count,
                               size_t *defaults_out)
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

bool report_make_ready(struct report *r, const struct report_load_settings *s, char *error,
                       size_t size)
{
    if (s->symbols && report_symbolize(r, s->binary, s->debug_file, s->warn ? s->warn : stderr,
                                       error, size) != REPORT_OK)
        return false;
    struct report_fold_settings fold = {.recognise = s->skip_defaults};
    const char **globs = skip_globs(s, &fold.glob_count, &fold.user_from);
    fold.globs = globs;
    report_fold(r, &fold);
    free(globs);
    return true;
}

bool report_load_ready(const char *const *paths, size_t count, const struct report_load_settings *s,
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
    return report_make_ready(r, s, error, size);
}
