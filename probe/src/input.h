/* Opening what the probe reads: a readable regular file (a FIFO or a device would block or never
 * end) and a whole ELF file, reported to an offline libdwfl session that finds separate debug
 * files. */
#ifndef PROBE_INPUT_H
#define PROBE_INPUT_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

/* False, with "path: why" in error, unless path is a readable regular file and, when it is an
 * ELF file, a whole one: its headers and every section's bytes inside the file (a cut download
 * or copy), its headers readable. */
bool probe_check_file(const char *path, char *error, size_t error_size);

/* path as the one module of a new offline Dwfl (*dwfl, to dwfl_end), or NULL with one line in
 * error when libdwfl cannot read it. */
Dwfl_Module *probe_report_offline(const char *path, Dwfl **dwfl, char *error, size_t error_size);

#endif
