/* The layout tests' shared fixture (probe_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "probe_fixture.h"

char dir[128];

void setup_dir(const char *what)
{
    snprintf(dir, sizeof dir, "/tmp/qaudit-%s-XXXXXX", what);
    assert_non_null(mkdtemp(dir));
}

void cleanup_dir(void)
{
    sh("rm -rf %s", dir);
}

int sh(const char *fmt, ...)
{
    char command[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(command, sizeof command, fmt, ap);
    va_end(ap);
    int status = system(command);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

json_t *layout_json(const char *binary, const char *args)
{
    char command[1024];
    snprintf(command, sizeof command, "%s layout --format json %s %s", QAUDIT, args, binary);
    FILE *p = popen(command, "r");
    json_error_t error;
    json_t *doc = json_loadf(p, 0, &error);
    int status = pclose(p);
    if (doc == NULL || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("%s: status %d, %s", command, status, doc ? "" : error.text);
    assert_string_equal(json_string_value(json_object_get(doc, "format")), "qaudit-layout/1");
    return doc;
}
