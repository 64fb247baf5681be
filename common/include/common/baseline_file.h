/* The qaudit-baseline/1 file as both halves of qaudit gate write it (struct rules, probe/;
 * allocation rules, reports/): JSON for people, one rule per line, so that a file both halves
 * write reads the same whichever wrote it last. */
#ifndef COMMON_BASELINE_FILE_H
#define COMMON_BASELINE_FILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes value: an object holding objects or arrays over several lines, two spaces deeper per
 * level from indent, its keys in their order; anything else (a flat object such as {"glibc":
 * 192, ...} too) on one line. Reals with 10 significant digits, as the allocation rules are
 * figured, so that writing a file again does not change them. */
void baseline_write_value(FILE *out, json_t *value, int indent);

/* Writes doc to path.tmp, then renames it over path, so that a failed write leaves path as it
 * was. False with one line in error ("cannot write PATH: reason"). */
bool baseline_file_save(json_t *doc, const char *path, char *error, size_t size);

#endif
