/* GET /debug/pprof/heap and /debug/pprof/allocs: a process's last dump as the gzipped
 * profile.proto `qaudit report --format pprof` writes (reports' own writer, through its public
 * header), made ready by report_load_ready as `qaudit report` makes it (symbolized, wrappers
 * folded), so that `go tool pprof -top` on the endpoint names the same top sites as `qaudit
 * report` on a snapshot. /heap's default sample type is inuse_space, /allocs' alloc_space, as
 * Go's net/http/pprof serves them. ?seconds=S: what changed between two dumps
 * (reports' report_load_delta; delta_profile.c takes the dumps). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/render.h"
#include "reports/report.h"
#include "internal.h"

static char *render(const struct report *r, bool allocs, FILE *quiet, size_t *length)
{
    char *body = NULL;
    FILE *out = open_memstream(&body, length);
    if (out == NULL)
        return NULL;
    struct report_options options = {.top = 10, .warn = quiet, .pprof_allocs = allocs};
    report_render(out, r, REPORT_PPROF, &options);
    bool failed = ferror(out) != 0;
    if (fclose(out) != 0 || failed || *length == 0) {
        free(body);
        return NULL;
    }
    return body;
}

char *pprof_render(const char *earlier, const char *later, bool allocs, size_t *length, char *error,
                   size_t size)
{
    FILE *quiet = fopen("/dev/null", "w");
    struct report r;
    memset(&r, 0, sizeof r);
    char *body = NULL;
    if (quiet == NULL)
        snprintf(error, size, "cannot open /dev/null");
    const char *paths[] = {later};
    const struct report_load_settings ready = {
        .symbols = true, .skip_defaults = true, .warn = quiet};
    bool loaded =
        quiet != NULL && (earlier ? report_load_delta(earlier, later, &ready, &r, error, size)
                                  : report_load_ready(paths, 1, &ready, &r, error, size));
    if (loaded && (body = render(&r, allocs, quiet, length)) == NULL)
        snprintf(error, size, "out of memory writing the profile");
    report_free(&r);
    if (quiet != NULL)
        fclose(quiet);
    return body;
}
