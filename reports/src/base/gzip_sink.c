/* Packing a protobuf-c message straight into a gzip stream on a FILE (reports_base.h). */
#include "reports_base.h"

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* A ProtobufCBuffer that deflates what protobuf-c packs into a gzip stream on a FILE. */
struct gzip_sink {
    ProtobufCBuffer base;
    z_stream z;
    FILE *out;
    bool failed;
    size_t pending;
    unsigned char in[1 << 16], chunk[1 << 16];
};

static void gzip_deflate(struct gzip_sink *g, int flush)
{
    g->z.next_in = g->in;
    g->z.avail_in = (uInt)g->pending;
    int rc;
    do {
        g->z.next_out = g->chunk;
        g->z.avail_out = sizeof g->chunk;
        rc = deflate(&g->z, flush);
        size_t n = sizeof g->chunk - g->z.avail_out;
        if (rc == Z_STREAM_ERROR || (n > 0 && fwrite(g->chunk, 1, n, g->out) != n))
            g->failed = true;
    } while (g->z.avail_out == 0 && rc != Z_STREAM_END && !g->failed);
    g->pending = 0;
}

static void gzip_append(ProtobufCBuffer *buffer, size_t length, const uint8_t *data)
{
    struct gzip_sink *g = (struct gzip_sink *)buffer;
    while (length > 0) {
        size_t n = sizeof g->in - g->pending < length ? sizeof g->in - g->pending : length;
        memcpy(g->in + g->pending, data, n);
        g->pending += n;
        data += n;
        length -= n;
        if (g->pending == sizeof g->in)
            gzip_deflate(g, Z_NO_FLUSH);
    }
}

void report_write_gzipped(FILE *out, const ProtobufCMessage *message)
{
    struct gzip_sink *g = calloc(1, sizeof *g);
    if (g == NULL || deflateInit2(&g->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(g);
        fprintf(stderr, "qaudit report: cannot start gzip\n");
        return;
    }
    g->base.append = gzip_append;
    g->out = out;
    protobuf_c_message_pack_to_buffer(message, &g->base);
    gzip_deflate(g, Z_FINISH);
    if (g->failed && !ferror(out))
        fprintf(stderr, "qaudit report: gzip failed\n");
    deflateEnd(&g->z);
    free(g);
}
