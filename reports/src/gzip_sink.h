/* Packing a protobuf-c message gzipped onto a FILE, deflated while protobuf-c packs it, so the
 * serialized profile is never held whole in memory. */
#ifndef REPORTS_GZIP_SINK_H
#define REPORTS_GZIP_SINK_H

#include <protobuf-c/protobuf-c.h>
#include <stdio.h>

/* Packs message gzipped onto out (level 1, as Go's runtime/pprof writes its profiles); a write
 * error shows in ferror(out). */
void report_write_gzipped(FILE *out, const ProtobufCMessage *message);

#endif
