/* RESP2 and inline request parsing over a sequence of byte segments (the connection's queued
 * receive buffers, or one spill buffer). Two steps: resp_scan finds, incrementally and without
 * copying, where a complete command ends; resp_extract then walks that command once and yields
 * its arguments, pointing into the segments and copying only the arguments that span two. */
#ifndef RINGKV_RESP_H
#define RINGKV_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RESP_MAX_ARGS (1024 * 1024)
#define RESP_MAX_BULK (512LL * 1024 * 1024)
#define RESP_MAX_INLINE (64 * 1024)
/* A bulk at least this long is read into a spill buffer rather than held in receive buffers. */
#define RESP_SPILL_BULK (256 * 1024)

struct resp_segment {
    const char *data;
    size_t len;
};

/* Segment index of the source, or false when there is no such segment (yet). */
typedef bool (*resp_segment_fn)(void *source, size_t index, struct resp_segment *out);

enum resp_status {
    RESP_INCOMPLETE, /* need more bytes; the scan resumes where it stopped */
    RESP_COMPLETE,   /* a command ends at (scan.seg, scan.off) */
    RESP_SPILL,      /* a bulk of at least RESP_SPILL_BULK follows: switch to a spill buffer */
    RESP_ERROR,      /* protocol error: message in *error, close the connection */
};

/* Scan state kept in the connection between receives: 24 bytes. */
struct resp_scan {
    uint32_t seg;      /* segment where scanning resumes */
    uint32_t off;      /* offset in that segment */
    int64_t number;    /* number being read, or bulk bytes still to skip */
    int32_t args_left; /* bulks still expected in this multibulk */
    uint8_t state;
    uint8_t digits;
    uint8_t negative;
    uint8_t is_inline;
};

struct resp_arg {
    const char *ptr;
    size_t len;
};

/* Where extracted arguments go: argv, and an arena for arguments that span segments. Owned by
 * the caller and reused from command to command. */
struct resp_args {
    struct resp_arg *argv;
    size_t argc, argv_cap;
    char *arena;
    size_t arena_cap;
};

void resp_scan_reset(struct resp_scan *scan);

/* Continues scanning. Bytes before the scan position are never looked at again. */
enum resp_status resp_scan(struct resp_scan *scan, resp_segment_fn segment, void *source,
                           const char **error);

/* Total bytes of the command from the start of segment 0 to (seg, off). */
size_t resp_scan_length(const struct resp_scan *scan, resp_segment_fn segment, void *source);

/* Fills args with the arguments of the complete command at the start of the source, which is
 * length bytes long (resp_scan_length). Returns false only when memory runs out. */
bool resp_extract(resp_segment_fn segment, void *source, size_t length, struct resp_args *args);

void resp_args_free(struct resp_args *args);

#endif
