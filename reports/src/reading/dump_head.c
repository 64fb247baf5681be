/* A dump's head (reports/dump_head.h): the top-level members up to "format", "process" and
 * "config", cut from the first bytes of the file at a top-level comma and closed, then parsed
 * with jansson. A dump holds its modules, sites and timeline after them: megabytes that picking
 * dumps need not read. */
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dump_keys.h"
#include "reports_reading.h"
#include "reports/dump_head.h"

#define HEAD_BYTES                                                                                 \
    (256 * 1024) /* process (argv up to 4 KB, escaped) and config come long before                 \
                  */
#define FORMAT_PREFIX "qaudit-alloc/"

/* The members a head needs, found at the top level of the object. */
enum { WANT_FORMAT = 1, WANT_PROCESS = 2, WANT_CONFIG = 4, WANT_ALL = 7 };

static unsigned wanted_key(const char *key, size_t n)
{
    static const struct {
        const char *name;
        unsigned bit;
    } keys[] = {{QA_KEY(format), WANT_FORMAT},
                {QA_KEY(process), WANT_PROCESS},
                {QA_KEY(config), WANT_CONFIG}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].name) == n && memcmp(keys[i].name, key, n) == 0)
            return keys[i].bit;
    return 0;
}

/* Where to cut text (n bytes, a JSON object's start) so that text[0..cut) closed with '}' holds
 * every wanted member: a top-level comma after the last of them, or the object's own end (then
 * *whole). 0 when the text ends first. */
static size_t head_cut(const char *text, size_t n, bool *whole)
{
    int depth = 0;
    bool in_string = false, escaped = false, key_next = false;
    size_t key_start = 0;
    unsigned seen = 0;
    *whole = false;
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"') {
                in_string = false;
                if (key_start > 0)
                    seen |= wanted_key(text + key_start, i - key_start);
                key_start = 0;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
            key_start = depth == 1 && key_next ? i + 1 : 0;
        } else if (c == '{' || c == '[') {
            key_next = ++depth == 1;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) {
                *whole = true;
                return i + 1;
            }
        } else if (depth == 1 && c == ':') {
            key_next = false;
        } else if (depth == 1 && c == ',') {
            if (seen == WANT_ALL)
                return i;
            key_next = true;
        }
    }
    return 0;
}

static void copy_text(char *out, size_t size, const char *text)
{
    snprintf(out, size, "%s", text ? text : "");
}

/* The head from a parsed object (the whole dump, or its first members closed). */
static bool head_from(json_t *doc, struct report_dump_head *out)
{
    const char *format = json_string_value(json_object_get(doc, QA_KEY(format)));
    if (format == NULL || strncmp(format, FORMAT_PREFIX, strlen(FORMAT_PREFIX)) != 0)
        return false;
    json_t *process = json_object_get(doc, QA_KEY(process));
    json_t *pid = json_object_get(process, QA_KEY(pid));
    out->pid =
        json_is_integer(pid) && json_integer_value(pid) > 0 ? (uint64_t)json_integer_value(pid) : 0;
    json_t *start = json_object_get(process, QA_KEY(start_time_ns));
    out->start_time_ns = json_is_integer(start) ? (uint64_t)json_integer_value(start) : 0;
    copy_text(out->reason, sizeof out->reason,
              json_string_value(json_object_get(doc, QA_KEY(reason))));
    copy_text(out->run_id, sizeof out->run_id,
              json_string_value(json_object_get(process, QA_KEY(run_id))));
    copy_text(out->exe, sizeof out->exe, json_string_value(json_object_get(process, QA_KEY(exe))));
    copy_text(out->argv0, sizeof out->argv0,
              json_string_value(json_array_get(json_object_get(process, QA_KEY(argv)), 0)));
    copy_text(out->fallback_dir, sizeof out->fallback_dir,
              json_string_value(
                  json_object_get(json_object_get(doc, QA_KEY(config)), QA_KEY(fallback_dir))));
    return true;
}

/* The object's head members parsed from the first n bytes of text (its first byte '{'); NULL
 * when they are not all in those bytes (*open: the object goes on past them). */
static json_t *parse_head(char *text, size_t n, bool *open)
{
    bool whole;
    size_t cut = head_cut(text, n, &whole);
    *open = cut == 0;
    if (cut == 0)
        return NULL;
    if (whole)
        return json_loadb(text, cut, 0, NULL);
    text[cut] = '}'; /* in place of the comma after the last member wanted */
    return json_loadb(text, cut + 1, 0, NULL);
}

/* The file's head members: from its first 16 KiB (where a preload's dump has them), else its
 * first 256 KiB, else the whole file; NULL when it is no JSON object. */
static json_t *load_head(int fd, const char *path)
{
    static const size_t steps[] = {16 * 1024, HEAD_BYTES};
    char *buf = malloc(HEAD_BYTES + 1);
    size_t got = 0, start = 0;
    json_t *doc = NULL;
    bool open = true, ended = false;
    for (size_t s = 0; buf != NULL && s < 2 && doc == NULL && open && !ended; s++) {
        ssize_t r = 0;
        while (got < steps[s] && (r = read(fd, buf + got, steps[s] - got)) > 0)
            got += (size_t)r;
        ended = got < steps[s];
        while (start < got && strchr(" \t\r\n", buf[start]) != NULL)
            start++;
        if (start == got || buf[start] != '{') {
            open = false;
            break;
        }
        doc = parse_head(buf + start, got - start, &open);
    }
    if (doc == NULL && open && !ended) /* the members wanted come late: read it all */
        doc = json_load_file(path, 0, NULL);
    free(buf);
    return doc;
}

bool report_dump_head(const char *path, struct report_dump_head *out)
{
    memset(out, 0, sizeof *out);
    const char *name = strrchr(path, '/');
    if (strstr(name ? name + 1 : path, ".tmp.") != NULL)
        return false; /* a dump being written: the preload renames it when done */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    json_t *doc = load_head(fd, path);
    close(fd);
    bool dump = doc != NULL && head_from(doc, out);
    json_decref(doc);
    return dump;
}

bool report_program_matches(const char *exe, const char *argv0, const char *name)
{
    if (strchr(name, '/') != NULL)
        return fnmatch(name, exe, 0) == 0;
    if (exe[0] != '\0' && fnmatch(name, report_path_base_name(exe), 0) == 0)
        return true;
    char word[DUMP_HEAD_TEXT];
    program_name(argv0, NULL, word, sizeof word); /* the title's first word, as reports name it */
    return word[0] != '\0' && fnmatch(name, word, 0) == 0;
}
