/* Numbers as DWARF encodes them (DWARF 5, section 7.6): LEB128 and little-endian fixed sizes,
 * read within the bytes they may occupy. For the readers that take DIEs and abbreviations from
 * their bytes (abbrev_check.c, die_scan.c, die_end.c). */
#ifndef PROBE_DWARF_NUMBERS_H
#define PROBE_DWARF_NUMBERS_H

#include <stdbool.h>
#include <stddef.h>

/* A LEB128 number at *p within [*p, end), *p moved past it; false past end or beyond 64 bits
 * (more than ten bytes). */
static inline bool probe_leb128(const unsigned char **p, const unsigned char *end, bool is_signed,
                                unsigned long long *out)
{
    unsigned long long value = 0;
    unsigned shift = 0;
    for (; *p < end; shift += 7) {
        unsigned char byte = *(*p)++;
        if (shift < 64)
            value |= (unsigned long long)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            if (is_signed && shift + 7 < 64 && (byte & 0x40))
                value |= ~0ull << (shift + 7);
            *out = value;
            return shift < 70;
        }
    }
    return false;
}

/* The n-byte little-endian number at p (n at most 8). */
static inline unsigned long long probe_little_endian(const unsigned char *p, size_t n)
{
    unsigned long long value = 0;
    for (size_t i = n; i-- > 0;)
        value = value << 8 | p[i];
    return value;
}

#endif
