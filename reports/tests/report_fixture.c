/* The report library's unit tests' shared fixture (report_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

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

char *render(const struct report *r, enum report_format format)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    struct report_options options = {.top = 10, .cacheline = 64};
    report_render(out, r, format, &options);
    fclose(out);
    return text;
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
