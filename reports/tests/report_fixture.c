/* The report library's unit tests' shared fixture (report_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_fixture.h"

static char scratch[] = "/tmp/qaudit-test-reports-XXXXXX";

json_t *example(void)
{
    json_error_t e;
    json_t *doc = json_load_file(EXAMPLE_DUMP, 0, &e);
    assert_non_null(doc);
    return doc;
}

/* The path lives until eight more are asked for. */
const char *scratch_path(const char *name)
{
    static char paths[8][512];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, 512, "%s/%s", scratch, name);
    return path;
}

const char *write_doc(json_t *doc, const char *name)
{
    const char *path = scratch_path(name);
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    return path;
}

char *render_weighted(const struct report *r, enum report_format format, enum report_weight weight)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    struct report_options options = {.top = 10, .cacheline = 64, .weight = weight};
    report_render(out, r, format, &options);
    fclose(out);
    return text;
}

char *render(const struct report *r, enum report_format format)
{
    return render_weighted(r, format, WEIGHT_ALLOCS);
}

size_t occurrences(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

int make_scratch(void **state)
{
    (void)state;
    return mkdtemp(scratch) ? 0 : -1;
}

int remove_scratch(void **state)
{
    (void)state;
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", scratch);
    return system(command) == 0 ? 0 : -1;
}

struct report *hand_report(size_t sites)
{
    struct report *r = calloc(1, sizeof *r);
    r->modules = calloc(2, sizeof *r->modules);
    r->modules[0] = (struct report_module){
        .path = strdup("/bin/prog"), .build_id = strdup(""), .is_main = true};
    r->modules[1] =
        (struct report_module){.path = strdup("/lib/libc.so.6"), .build_id = strdup("")};
    r->module_count = 2;
    r->sites = calloc(sites + 1, sizeof *r->sites);
    r->processes = calloc(1, sizeof *r->processes);
    r->processes[0] = (struct report_process){.pid = 7,
                                              .exe = strdup("/bin/prog"),
                                              .argv = strdup("prog"),
                                              .reason = strdup("exit"),
                                              .source = strdup("x.json"),
                                              .stacks_mode = strdup("always"),
                                              .final = true};
    r->process_count = 1;
    r->symbolized = true;
    const char *globs[] = {"xmalloc"};
    report_fold(r, &(struct report_fold_settings){globs, 1, 1, false});
    return r;
}

void hand_report_free(struct report *r)
{
    report_free(r);
    free(r);
}

struct report_frame hand_frame(uint32_t module, uint64_t offset, const char *inlined,
                               const char *function, unsigned line)
{
    struct report_frame f = {module, offset, NULL, 0};
    f.locations = calloc(2, sizeof *f.locations);
    if (inlined != NULL)
        f.locations[f.location_count++] =
            (struct report_location){strdup(inlined), strdup("/src/a.c"), 3, true};
    if (function != NULL)
        f.locations[f.location_count++] =
            (struct report_location){strdup(function), strdup("/src/a.c"), line, false};
    return f;
}

void hand_site(struct report *r, struct report_frame *frames, size_t n, double allocs, double bytes,
               double live, bool estimated)
{
    struct report_site *s = &r->sites[r->site_count++];
    s->stack.frames = calloc(n + 1, sizeof *frames);
    if (n > 0) /* a site without a stack passes no frames */
        memcpy(s->stack.frames, frames, n * sizeof *frames);
    s->stack.frame_count = n;
    s->allocs = (uint64_t)allocs;
    s->bytes = (uint64_t)bytes;
    s->live_bytes = (uint64_t)live;
    s->estimated = estimated;
    s->est = (struct report_estimate){.allocs = allocs, .bytes = bytes, .live_bytes = live};
}
