/* Opening what the probe reads: a readable regular file (a FIFO or a device would block or never
 * end) and a whole ELF file, reported to an offline libdwfl session that finds separate debug
 * files. */
#ifndef PROBE_INPUT_H
#define PROBE_INPUT_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

/* False, with "path: why" in error, unless path is a readable regular file and, when it is an
 * ELF file, a whole one (probe_check_elf). */
bool probe_check_file(const char *path, char *error, size_t error_size);

/* False, with "path: truncated or corrupt ELF: why" in error, when elf's headers or a section's
 * bytes lie past the end of its image (a cut download or copy), or its headers are unreadable. */
bool probe_check_elf(Elf *elf, const char *path, char *error, size_t error_size);

/* Makes text one printable line: control characters (a newline in a section or type name read
 * from a damaged file) become '?'. */
void probe_one_line(char *text);

/* path as the one module of a new offline Dwfl (*dwfl, to dwfl_end), or NULL with one line in
 * error when libdwfl cannot read it. */
Dwfl_Module *probe_report_offline(const char *path, Dwfl **dwfl, char *error, size_t error_size);

#endif
