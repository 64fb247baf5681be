/* The segment source and consumption loop shared by test_resp and fuzz_resp. */
#include "resp_feed.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct source {
    const char **data;
    size_t *len;
    size_t first, available, offset;
    char *spill; /* when set, the only segment */
    size_t spill_len;
};

static bool source_segment(void *ctx, size_t index, struct resp_segment *out)
{
    struct source *s = ctx;
    if (s->spill) {
        *out = (struct resp_segment){s->spill, s->spill_len};
        return index == 0;
    }
    size_t i = s->first + index;
    if (i >= s->available)
        return false;
    size_t skip = index == 0 ? s->offset : 0;
    *out = (struct resp_segment){s->data[i] + skip, s->len[i] - skip};
    return true;
}

static void consume(struct source *s, size_t n)
{
    if (s->spill) {
        memmove(s->spill, s->spill + n, s->spill_len - n);
        s->spill_len -= n;
        return;
    }
    while (n > 0) {
        size_t left = s->len[s->first] - s->offset;
        if (n < left) {
            s->offset += n;
            return;
        }
        n -= left;
        s->first++;
        s->offset = 0;
    }
}

static void spill_append(struct source *s, const char *bytes, size_t n)
{
    s->spill = realloc(s->spill, s->spill_len + n + 1);
    if (s->spill == NULL)
        abort();
    memcpy(s->spill + s->spill_len, bytes, n);
    s->spill_len += n;
}

/* Gathers what is unconsumed into one spill segment, as ringkv does for a large bulk. */
static void start_spill(struct source *s, struct resp_scan *scan)
{
    size_t scanned = resp_scan_length(scan, source_segment, s);
    struct source queued = *s;
    struct resp_segment seg;
    for (size_t i = 0; source_segment(&queued, i, &seg); i++)
        spill_append(s, seg.data, seg.len);
    if (s->spill == NULL)
        spill_append(s, "", 0);
    s->first = s->available;
    scan->seg = 0;
    scan->off = (uint32_t)scanned;
}

const char *resp_feed(const char *input, size_t len, const size_t *cuts, size_t ncuts,
                      resp_feed_command_fn on_command, void *ctx)
{
    struct source s = {0};
    s.data = malloc((ncuts + 1) * sizeof *s.data);
    s.len = malloc((ncuts + 1) * sizeof *s.len);
    struct resp_scan scan;
    resp_scan_reset(&scan);
    struct resp_args args = {0};
    const char *error = NULL;
    size_t start = 0;
    for (size_t i = 0; i <= ncuts && error == NULL; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        if (s.spill) {
            spill_append(&s, input + start, end - start);
        } else {
            s.data[s.available] = input + start;
            s.len[s.available++] = end - start;
        }
        start = end;
        for (;;) {
            enum resp_status status = resp_scan(&scan, source_segment, &s, &error);
            if (status == RESP_INCOMPLETE || status == RESP_ERROR)
                break;
            if (status == RESP_SPILL) {
                if (s.spill == NULL)
                    start_spill(&s, &scan);
                continue;
            }
            size_t length = resp_scan_length(&scan, source_segment, &s);
            if (!resp_extract(source_segment, &s, length, &args))
                abort();
            if (args.argc > 0)
                on_command(ctx, &args);
            consume(&s, length);
            resp_scan_reset(&scan);
        }
    }
    resp_args_free(&args);
    free(s.spill);
    free(s.data);
    free(s.len);
    return error;
}
