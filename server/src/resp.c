/* The RESP scanner (incremental, no copies) and extractor (one pass over a complete command). */
#include "resp.h"

#include <stdlib.h>
#include <string.h>

enum scan_state {
    S_START,       /* first byte of a command */
    S_MULTI_LEN,   /* digits of *N */
    S_MULTI_LF,    /* \n after *N\r */
    S_BULK_MARK,   /* the $ of the next bulk */
    S_BULK_LEN,    /* digits of $N */
    S_BULK_LF,     /* \n after $N\r */
    S_BULK_DATA,   /* number bytes of payload left */
    S_BULK_CR,     /* \r after payload */
    S_BULK_END_LF, /* \n after payload */
    S_INLINE,      /* an inline command line up to \n */
};

void resp_scan_reset(struct resp_scan *scan)
{
    memset(scan, 0, sizeof *scan);
}

/* Feeds one digit (or sign, or \r) of a length line. Returns false with *error on bad input. */
static bool scan_number_byte(struct resp_scan *scan, char c, bool *done, const char **error,
                             const char *what)
{
    if (c == '-' && scan->digits == 0 && !scan->negative) {
        scan->negative = 1;
        return true;
    }
    if (c >= '0' && c <= '9') {
        if (++scan->digits > 12) {
            *error = what;
            return false;
        }
        scan->number = scan->number * 10 + (c - '0');
        return true;
    }
    if (c == '\r' && scan->digits > 0) {
        if (scan->negative)
            scan->number = -scan->number;
        *done = true;
        return true;
    }
    *error = what;
    return false;
}

static void start_number(struct resp_scan *scan, enum scan_state next)
{
    scan->number = 0;
    scan->digits = 0;
    scan->negative = 0;
    scan->state = (uint8_t)next;
}

/* Handles one byte in a state that looks at bytes one by one. Returns the status to report, or
 * RESP_INCOMPLETE to go on. */
static enum resp_status scan_byte(struct resp_scan *scan, char c, const char **error)
{
    bool done = false;
    switch (scan->state) {
    case S_START:
        if (c == '*') {
            start_number(scan, S_MULTI_LEN);
        } else if (c == '\n') {
            return RESP_COMPLETE; /* a blank line: an empty command, consumed at once */
        } else if (c != '\r') {
            scan->is_inline = 1;
            scan->number = 1;
            scan->state = S_INLINE;
        }
        return RESP_INCOMPLETE;
    case S_MULTI_LEN:
        if (!scan_number_byte(scan, c, &done, error, "Protocol error: invalid multibulk length"))
            return RESP_ERROR;
        if (done)
            scan->state = S_MULTI_LF;
        return RESP_INCOMPLETE;
    case S_MULTI_LF:
        if (c != '\n' || scan->number > RESP_MAX_ARGS) {
            *error = "Protocol error: invalid multibulk length";
            return RESP_ERROR;
        }
        if (scan->number <= 0)
            return RESP_COMPLETE; /* *0 and *-1: an empty command, skipped */
        scan->args_left = (int32_t)scan->number;
        scan->state = S_BULK_MARK;
        return RESP_INCOMPLETE;
    case S_BULK_MARK:
        if (c != '$') {
            *error = "Protocol error: expected '$'";
            return RESP_ERROR;
        }
        start_number(scan, S_BULK_LEN);
        return RESP_INCOMPLETE;
    case S_BULK_LEN:
        if (!scan_number_byte(scan, c, &done, error, "Protocol error: invalid bulk length"))
            return RESP_ERROR;
        if (done)
            scan->state = S_BULK_LF;
        return RESP_INCOMPLETE;
    case S_BULK_LF:
        if (c != '\n' || scan->number < 0 || scan->number > RESP_MAX_BULK) {
            *error = "Protocol error: invalid bulk length";
            return RESP_ERROR;
        }
        scan->state = S_BULK_DATA;
        return scan->number >= RESP_SPILL_BULK ? RESP_SPILL : RESP_INCOMPLETE;
    case S_BULK_CR:
        if (c != '\r') {
            *error = "Protocol error: expected CRLF after bulk";
            return RESP_ERROR;
        }
        scan->state = S_BULK_END_LF;
        return RESP_INCOMPLETE;
    case S_BULK_END_LF:
        if (c != '\n') {
            *error = "Protocol error: expected CRLF after bulk";
            return RESP_ERROR;
        }
        if (--scan->args_left == 0)
            return RESP_COMPLETE;
        scan->state = S_BULK_MARK;
        return RESP_INCOMPLETE;
    }
    *error = "Protocol error: parser state";
    return RESP_ERROR;
}

/* Scans within one segment from scan->off; advances scan->off past what it consumed. */
static enum resp_status scan_segment(struct resp_scan *scan, struct resp_segment seg,
                                     const char **error)
{
    while (scan->off < seg.len) {
        if (scan->state == S_BULK_DATA) {
            size_t avail = seg.len - scan->off;
            size_t take = (uint64_t)scan->number < avail ? (size_t)scan->number : avail;
            scan->off += (uint32_t)take;
            scan->number -= (int64_t)take;
            if (scan->number == 0)
                scan->state = S_BULK_CR;
            continue;
        }
        if (scan->state == S_INLINE) {
            const char *start = seg.data + scan->off;
            const char *nl = memchr(start, '\n', seg.len - scan->off);
            size_t span = nl ? (size_t)(nl - start) + 1 : seg.len - scan->off;
            scan->number += (int64_t)span;
            scan->off += (uint32_t)span;
            if (scan->number > RESP_MAX_INLINE) {
                *error = "Protocol error: too big inline request";
                return RESP_ERROR;
            }
            if (nl)
                return RESP_COMPLETE;
            continue;
        }
        enum resp_status status = scan_byte(scan, seg.data[scan->off++], error);
        if (status != RESP_INCOMPLETE)
            return status;
    }
    return RESP_INCOMPLETE;
}

enum resp_status resp_scan(struct resp_scan *scan, resp_segment_fn segment, void *source,
                           const char **error)
{
    struct resp_segment seg, next;
    while (segment(source, scan->seg, &seg)) {
        enum resp_status status = scan_segment(scan, seg, error);
        if (status != RESP_INCOMPLETE)
            return status;
        /* Stay at the end of the last segment: it may be a spill buffer that grows. */
        if (!segment(source, scan->seg + 1, &next))
            break;
        scan->seg++;
        scan->off = 0;
    }
    return RESP_INCOMPLETE;
}

size_t resp_scan_length(const struct resp_scan *scan, resp_segment_fn segment, void *source)
{
    size_t length = 0;
    struct resp_segment seg;
    for (uint32_t i = 0; i < scan->seg && segment(source, i, &seg); i++)
        length += seg.len;
    return length + scan->off;
}

/* A read position over the segments of a complete command. */
struct cursor {
    resp_segment_fn segment;
    void *source;
    size_t index;
    struct resp_segment seg;
    size_t off;
};

static bool cursor_fill(struct cursor *c)
{
    while (c->off == c->seg.len) {
        if (!c->segment(c->source, ++c->index, &c->seg))
            return false;
        c->off = 0;
    }
    return true;
}

static char cursor_byte(struct cursor *c)
{
    if (!cursor_fill(c))
        return 0;
    return c->seg.data[c->off++];
}

/* Reads a CRLF-terminated decimal (the scanner has validated it). */
static int64_t cursor_number(struct cursor *c)
{
    int64_t n = 0;
    bool negative = false;
    char ch;
    while ((ch = cursor_byte(c)) != '\r') {
        if (ch == '-')
            negative = true;
        else
            n = n * 10 + (ch - '0');
    }
    cursor_byte(c); /* \n */
    return negative ? -n : n;
}

/* n bytes at the cursor: a pointer into the segment when they lie in one, else a copy. */
static const char *cursor_take(struct cursor *c, size_t n, char **arena)
{
    cursor_fill(c);
    if (c->seg.len - c->off >= n) {
        const char *p = c->seg.data + c->off;
        c->off += n;
        return p;
    }
    char *copy = *arena, *dst = copy;
    while (n > 0 && cursor_fill(c)) {
        size_t take = c->seg.len - c->off < n ? c->seg.len - c->off : n;
        memcpy(dst, c->seg.data + c->off, take);
        dst += take;
        c->off += take;
        n -= take;
    }
    *arena = dst;
    return copy;
}

static bool args_reserve(struct resp_args *args, size_t argc, size_t bytes)
{
    if (argc > args->argv_cap) {
        struct resp_arg *argv = realloc(args->argv, argc * sizeof *argv);
        if (argv == NULL)
            return false;
        args->argv = argv;
        args->argv_cap = argc;
    }
    if (bytes > args->arena_cap) {
        char *arena = realloc(args->arena, bytes);
        if (arena == NULL)
            return false;
        args->arena = arena;
        args->arena_cap = bytes;
    }
    return true;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* An inline command: the line (copied if it spans segments) split at spaces. */
static bool extract_inline(struct cursor *c, size_t length, struct resp_args *args)
{
    if (!args_reserve(args, length / 2 + 1, length))
        return false;
    char *arena = args->arena;
    const char *line = cursor_take(c, length, &arena);
    size_t i = 0;
    args->argc = 0;
    while (i < length) {
        while (i < length && is_space(line[i]))
            i++;
        size_t start = i;
        while (i < length && !is_space(line[i]))
            i++;
        if (i > start)
            args->argv[args->argc++] = (struct resp_arg){line + start, i - start};
    }
    return true;
}

bool resp_extract(resp_segment_fn segment, void *source, size_t length, struct resp_args *args)
{
    struct cursor c = {.segment = segment, .source = source};
    args->argc = 0;
    if (!segment(source, 0, &c.seg))
        return true;
    /* Skip the empty lines that may precede a command. */
    size_t skipped = 0;
    while (cursor_fill(&c) && (c.seg.data[c.off] == '\r' || c.seg.data[c.off] == '\n')) {
        c.off++;
        skipped++;
    }
    if (!cursor_fill(&c) || skipped >= length)
        return true;
    if (c.seg.data[c.off] != '*')
        return extract_inline(&c, length - skipped, args);
    c.off++;
    int64_t count = cursor_number(&c);
    if (count <= 0)
        return true;
    if (!args_reserve(args, (size_t)count, length))
        return false;
    char *arena = args->arena;
    for (int64_t i = 0; i < count; i++) {
        cursor_byte(&c); /* $ */
        size_t len = (size_t)cursor_number(&c);
        const char *ptr = cursor_take(&c, len, &arena);
        args->argv[args->argc++] = (struct resp_arg){ptr, len};
        cursor_byte(&c);
        cursor_byte(&c); /* \r\n */
    }
    return true;
}

void resp_args_free(struct resp_args *args)
{
    free(args->argv);
    free(args->arena);
    memset(args, 0, sizeof *args);
}
