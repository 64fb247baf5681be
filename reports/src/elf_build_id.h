/* What the reports read from a module's file with libelf: its GNU build id, for dumps that carry
 * none (pprof mappings), and whether it has a section (a Go program's .note.go.buildid). */
#ifndef REPORTS_ELF_BUILD_ID_H
#define REPORTS_ELF_BUILD_ID_H

#include <stdbool.h>
#include <stddef.h>

enum build_id_status { BUILD_ID_FOUND, BUILD_ID_NONE, BUILD_ID_NO_FILE };

/* The build id of the ELF file at path as lowercase hex in out: BUILD_ID_NO_FILE when the file
 * cannot be opened (gone, or not a regular file), BUILD_ID_NONE when it is not ELF or has no
 * NT_GNU_BUILD_ID note. */
enum build_id_status report_elf_file_build_id(const char *path, char *out, size_t size);

/* Whether the ELF file at path has a section called name; false when it cannot be read. */
bool report_elf_file_has_section(const char *path, const char *name);

#endif
