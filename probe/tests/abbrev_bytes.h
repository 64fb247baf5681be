/* Where an ELF file's abbreviation tables keep each abbreviation's tag and children flag, read
 * from .debug_abbrev by hand (DWARF 5, section 7.5.3) apart from the reader under test, so that
 * test_layout_corrupt knows which byte flips break the structure of the DWARF. */
#ifndef PROBE_TESTS_ABBREV_BYTES_H
#define PROBE_TESTS_ABBREV_BYTES_H

#include <stddef.h>

struct abbrev_bytes {
    long tag_at;      /* file offset of the tag, -1 when it takes more than one byte */
    long children_at; /* file offset of the children flag (DW_CHILDREN_no or _yes) */
};

/* The abbreviations of binary's .debug_abbrev, at most max of them into out; how many. The test
 * fails when the section cannot be parsed. */
size_t abbrev_bytes(const char *binary, struct abbrev_bytes *out, size_t max);

#endif
