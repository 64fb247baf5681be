/* The layout tests' shared fixture (probe_fixture.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "probe_fixture.h"

char dir[128];

/* A failing test jumps past its cleanup_dir(): the next setup_dir(), or the exit, removes its
 * directory. */
static void remove_left_dir(void)
{
    if (dir[0] != '\0')
        sh("rm -rf %s", dir);
    dir[0] = '\0';
}

void setup_dir(const char *what)
{
    static bool at_exit;
    if (!at_exit)
        at_exit = atexit(remove_left_dir) == 0;
    remove_left_dir();
    snprintf(dir, sizeof dir, "/tmp/qaudit-%s-XXXXXX", what);
    assert_non_null(mkdtemp(dir));
}

void cleanup_dir(void)
{
    remove_left_dir();
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

/* A whole small file, NUL-terminated; its length in *size. */
char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("%s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (size)
        *size = (size_t)n;
    return buf;
}

void spill(const char *path, const char *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

void section(const char *binary, const char *name, long *offset, long *size)
{
    char command[512], line[512];
    snprintf(command, sizeof command, "readelf -SW %s", binary);
    FILE *p = popen(command, "r");
    *offset = *size = -1;
    while (fgets(line, sizeof line, p)) {
        char *at = strstr(line, name);
        if (at == NULL || at[strlen(name)] != ' ')
            continue;
        char kind[32];
        unsigned long address, off, length;
        if (sscanf(at + strlen(name), " %31s %lx %lx %lx", kind, &address, &off, &length) == 4) {
            *offset = (long)off;
            *size = (long)length;
        }
    }
    pclose(p);
    assert_true(*offset > 0 && *size > 0);
}
