/* RESP2 reply encoding. */
#include "reply.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool out_reserve(struct outbuf *out, size_t more)
{
    if (out->failed)
        return false;
    if (out->cap - out->len >= more)
        return true;
    size_t cap = out->cap ? out->cap : 16384;
    while (cap - out->len < more) {
        if (cap > SIZE_MAX / 2) {
            out->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *data = realloc(out->data, cap);
    if (data == NULL) {
        out->failed = true;
        return false;
    }
    out->data = data;
    out->cap = cap;
    return true;
}

void out_append(struct outbuf *out, const void *bytes, size_t len)
{
    if (!out_reserve(out, len))
        return;
    memcpy(out->data + out->len, bytes, len);
    out->len += len;
}

void out_free(struct outbuf *out)
{
    free(out->data);
    memset(out, 0, sizeof *out);
}

static void reply_line(struct outbuf *out, char prefix, const char *text, size_t len)
{
    if (!out_reserve(out, len + 3))
        return;
    out->data[out->len++] = prefix;
    memcpy(out->data + out->len, text, len);
    out->len += len;
    out->data[out->len++] = '\r';
    out->data[out->len++] = '\n';
}

static void reply_number(struct outbuf *out, char prefix, int64_t value)
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%" PRId64, value);
    reply_line(out, prefix, digits, (size_t)n);
}

void reply_status(struct outbuf *out, const char *status)
{
    reply_line(out, '+', status, strlen(status));
}

void reply_error(struct outbuf *out, const char *message)
{
    reply_line(out, '-', message, strlen(message));
}

void reply_int(struct outbuf *out, int64_t value)
{
    reply_number(out, ':', value);
}

void reply_bulk(struct outbuf *out, const char *bytes, size_t len)
{
    reply_number(out, '$', (int64_t)len);
    if (!out_reserve(out, len + 2))
        return;
    memcpy(out->data + out->len, bytes, len);
    out->len += len;
    out->data[out->len++] = '\r';
    out->data[out->len++] = '\n';
}

void reply_cstr(struct outbuf *out, const char *text)
{
    reply_bulk(out, text, strlen(text));
}

void reply_nil(struct outbuf *out)
{
    out_append(out, "$-1\r\n", 5);
}

void reply_array(struct outbuf *out, size_t count)
{
    reply_number(out, '*', (int64_t)count);
}
