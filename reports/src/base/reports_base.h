/* The base room of the reports library: leaves every room above may call, which call nothing of
 * the reports library themselves. Numbers as every format writes them (numbers.c); strings copied
 * and lists of strings grown (items.c); errors made one line (one_line.c); a path's last component
 * and a program's name (path_name.c); C++ names shortened (cxx_short_names.c); what libelf reads
 * from a module's file (elf_build_id.c); open-addressing indexes (profile_index.c); a protobuf-c
 * message packed gzipped (gzip_sink.c). Files: the .c files of base/. */
#ifndef REPORTS_ROOM_BASE_H
#define REPORTS_ROOM_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/report.h"

/* ---- numbers.c ------------------------------------------------------------------------------ */

/* 1234567 -> "1,234,567" */
const char *report_fmt_count(char *buf, size_t size, unsigned long long n);
/* 1234567 -> "1.18 MiB"; below 10 KiB exact bytes "1,234 B". */
const char *report_fmt_bytes(char *buf, size_t size, unsigned long long n);

/* ---- items.c -------------------------------------------------------------------------------- */

/* strdup that maps NULL to NULL. */
char *report_copy_string(const char *s);

/* Appends a formatted string to a list of strings (*capacity: its allocated slots, grown by
 * common/grow_array.h's array_push). */
void report_push_string(char ***list, size_t *count, size_t *capacity, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- one_line.c ----------------------------------------------------------------------------- */

/* Makes an error one printable line: control characters (a newline jansson quotes from the
 * input, or one in a path) become '?'. */
void report_one_line(char *text);

/* ---- path_name.c ---------------------------------------------------------------------------- */

/* A path's last component ("/usr/bin/python3.11" -> "python3.11"). */
const char *report_path_base_name(const char *path);

/* ---- cxx_short_names.c ---------------------------------------------------------------------- */

/* A C++ name shortened as the tables show it (std::string, default template arguments dropped, a
 * long argument list <...>); name unchanged when nothing shortens. Returns out. */
const char *report_short_name(const char *name, char *out, size_t size);

/* ---- elf_build_id.c: what the reports read from a module's file with libelf: its GNU build id,
 * for dumps that carry none (pprof mappings), and whether it has a section (a Go program's
 * .note.go.buildid). */

/* report_elf_file_build_id is public (reports/report.h: qaudit serve labels a process with it). */

/* Whether the ELF file at path has a section called name; false when it cannot be read. */
bool report_elf_file_has_section(const char *path, const char *name);

/* ---- profile_index.c: deduplicating what a profile holds many times (strings, functions,
 * locations): an open-addressing index from a key of three words, or a string, to a number. */

struct slot {
    uint64_t hash, a, b, c, value;
    const char *string;
    bool used;
};

struct index {
    struct slot *slots;
    size_t capacity, count;
};

uint64_t report_index_mix(uint64_t h, uint64_t v);
uint64_t report_index_hash_string(const char *s);

/* The slot of the key (string, or a, b and c when string is NULL), used or free (then to be
 * filled by report_index_fill); NULL when memory ran out. */
struct slot *report_index_find(struct index *x, uint64_t hash, uint64_t a, uint64_t b, uint64_t c,
                               const char *string);
void report_index_fill(struct index *x, struct slot *slot, uint64_t hash, uint64_t a, uint64_t b,
                       uint64_t c, const char *string, uint64_t value);

/* ---- gzip_sink.c: packing a protobuf-c message gzipped onto a FILE, deflated while protobuf-c
 * packs it, so the serialized profile is never held whole in memory. */

struct ProtobufCMessage; /* protobuf-c's, <protobuf-c/protobuf-c.h> */
/* Packs message gzipped onto out (level 1, as Go's runtime/pprof writes its profiles); a write
 * error shows in ferror(out). */
void report_write_gzipped(FILE *out, const struct ProtobufCMessage *message);

#endif
