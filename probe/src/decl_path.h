/* Where a type is defined, as a path a CI system can point at: DWARF may name the file relative
 * to the unit's compilation directory ("../libio/bits/types/struct_FILE.h"). */
#ifndef PROBE_DECL_PATH_H
#define PROBE_DECL_PATH_H

/* file joined to comp_dir when relative (comp_dir may be NULL), with "." and ".." resolved
 * lexically; malloc'd, NULL when out of memory. */
char *probe_decl_path(const char *file, const char *comp_dir);

#endif
