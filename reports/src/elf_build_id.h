/* A module file's GNU build id read with libelf, for dumps that carry none (pprof mappings). */
#ifndef REPORTS_ELF_BUILD_ID_H
#define REPORTS_ELF_BUILD_ID_H

#include <stddef.h>

enum build_id_status { BUILD_ID_FOUND, BUILD_ID_NONE, BUILD_ID_NO_FILE };

/* The build id of the ELF file at path as lowercase hex in out: BUILD_ID_NO_FILE when the file
 * cannot be opened (gone, or not a regular file), BUILD_ID_NONE when it is not ELF or has no
 * NT_GNU_BUILD_ID note. */
enum build_id_status elf_file_build_id(const char *path, char *out, size_t size);

#endif
