/* Machine-code size of functions: ELF symbol sizes (a function and the clones the compiler split
 * off it: .cold, .constprop.N, .isra.N, .part.N) and how often DWARF says it was inlined. */
#ifndef PROBE_FUNCTIONS_H
#define PROBE_FUNCTIONS_H

#include <jansson.h>
#include <stdio.h>

#include "probe/layout.h"

struct function_info {
    char *name;         /* the symbol's name without clone suffixes, or DWARF's for inlined-only */
    uint64_t code_size; /* bytes: the sum of st_size over its symbols */
    size_t symbols;     /* function symbols counted (the function and its clones) */
    size_t inlined;     /* DW_TAG_inlined_subroutine instances: places it was inlined */
};

struct function_set {
    char *binary;
    struct function_info *items;
    size_t count, capacity;
};

/* Reads the functions of path whose names match one of patterns (globs, as --type). Inline counts
 * need DWARF (from path, its separate debug file, or debug_file); without it they are 0 and
 * *has_dwarf is false. LAYOUT_INPUT_ERROR with one line in error when path is not an ELF file. */
enum layout_status functions_read(const char *path, const char *debug_file,
                                  const char *const *patterns, size_t pattern_count,
                                  struct function_set *out, bool *has_dwarf, char *error,
                                  size_t error_size);

/* The total code size of the functions matching pattern; false when none matches. */
bool functions_code_size(const struct function_set *set, const char *pattern, uint64_t *size);

void functions_print_text(FILE *out, const struct function_set *set);
void functions_print_markdown(FILE *out, const struct function_set *set);
json_t *functions_json(const struct function_set *set);
void functions_free(struct function_set *set);

#endif
