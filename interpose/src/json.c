/* A JSON writer that needs no heap: a fixed buffer flushed to a file descriptor. The dump is
 * written with it while the audited process runs, so it must never call malloc. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

void qa_json_flush(struct qa_json *j)
{
    size_t done = 0;
    while (done < j->len && !j->failed) {
        ssize_t n = write(j->fd, j->buf + done, j->len - done);
        if (n <= 0)
            j->failed = true;
        else
            done += (size_t)n;
    }
    j->len = 0;
}

void qa_json_raw(struct qa_json *j, const char *s, size_t n)
{
    while (n > 0) {
        if (j->len == sizeof j->buf)
            qa_json_flush(j);
        size_t room = sizeof j->buf - j->len, take = n < room ? n : room;
        memcpy(j->buf + j->len, s, take);
        j->len += take;
        s += take;
        n -= take;
    }
}

static void comma(struct qa_json *j)
{
    if (j->need_comma)
        qa_json_raw(j, ",", 1);
    j->need_comma = true;
}

static void string_body(struct qa_json *j, const char *s, size_t n);

void qa_json_key(struct qa_json *j, const char *key)
{
    comma(j);
    string_body(j, key, strlen(key));
    qa_json_raw(j, ":", 1);
    j->need_comma = false;
}

void qa_json_begin_object(struct qa_json *j)
{
    comma(j);
    qa_json_raw(j, "{", 1);
    j->need_comma = false;
}

void qa_json_end_object(struct qa_json *j)
{
    qa_json_raw(j, "}", 1);
    j->need_comma = true;
}

void qa_json_begin_array(struct qa_json *j)
{
    comma(j);
    qa_json_raw(j, "[", 1);
    j->need_comma = false;
}

void qa_json_end_array(struct qa_json *j)
{
    qa_json_raw(j, "]", 1);
    j->need_comma = true;
}

static void number(struct qa_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void number(struct qa_json *j, const char *fmt, ...)
{
    char text[40];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    comma(j);
    qa_json_raw(j, text, (size_t)n);
}

void qa_json_u64(struct qa_json *j, uint64_t v)
{
    number(j, "%llu", (unsigned long long)v);
}
void qa_json_i64(struct qa_json *j, int64_t v)
{
    number(j, "%lld", (long long)v);
}
void qa_json_double(struct qa_json *j, double v)
{
    number(j, "%.6g", v);
}
void qa_json_hex(struct qa_json *j, uintptr_t v)
{
    number(j, "\"0x%llx\"", (unsigned long long)v);
}

void qa_json_bool(struct qa_json *j, bool v)
{
    comma(j);
    qa_json_raw(j, v ? "true" : "false", v ? 4 : 5);
}

static void string_body(struct qa_json *j, const char *s, size_t n)
{
    qa_json_raw(j, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            qa_json_raw(j, esc, 2);
        } else if (c < 0x20 || c == 0x7f) {
            char esc[8];
            int k = snprintf(esc, sizeof esc, "\\u%04x", c);
            qa_json_raw(j, esc, (size_t)k);
        } else {
            qa_json_raw(j, (const char *)&c, 1);
        }
    }
    qa_json_raw(j, "\"", 1);
}

void qa_json_strn(struct qa_json *j, const char *s, size_t n)
{
    comma(j);
    string_body(j, s, n);
}

void qa_json_str(struct qa_json *j, const char *s)
{
    qa_json_strn(j, s, strlen(s));
}

void qa_json_frames(struct qa_json *j, void *const *frames, int depth)
{
    qa_json_key(j, "frames");
    qa_json_begin_array(j);
    for (int f = 0; f < depth; f++)
        qa_json_hex(j, (uintptr_t)frames[f]);
    qa_json_end_array(j);
}
