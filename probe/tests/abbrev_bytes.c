/* The abbreviations' tag and children bytes of an ELF file (abbrev_bytes.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "abbrev_bytes.h"
#include "probe_fixture.h"

/* An unsigned or signed LEB128 number at *at (its value is not needed); false past end. */
static int skip_leb128(const unsigned char *bytes, size_t end, size_t *at, uint64_t *value)
{
    uint64_t v = 0;
    for (unsigned shift = 0; *at < end; shift += 7) {
        unsigned char b = bytes[(*at)++];
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *value = v;
            return 1;
        }
    }
    return 0;
}

size_t abbrev_bytes(const char *binary, struct abbrev_bytes *out, size_t max)
{
    long offset, size;
    section(binary, ".debug_abbrev", &offset, &size);
    size_t file_size, n = 0, at = (size_t)offset, end = (size_t)(offset + size);
    unsigned char *bytes = (unsigned char *)slurp(binary, &file_size);
    assert_true(end <= file_size);
    uint64_t code = 0, tag = 0, name = 0, form = 0, value = 0;
    while (at < end) {
        assert_true(skip_leb128(bytes, end, &at, &code));
        if (code == 0)
            continue; /* the end of one unit's table */
        size_t tag_at = at;
        assert_true(skip_leb128(bytes, end, &at, &tag) && at < end);
        if (n < max)
            out[n++] = (struct abbrev_bytes){at == tag_at + 1 ? (long)tag_at : -1, (long)at};
        at++; /* the children flag */
        do {
            assert_true(skip_leb128(bytes, end, &at, &name));
            assert_true(skip_leb128(bytes, end, &at, &form));
            if (form == 0x21) /* DW_FORM_implicit_const: its value follows */
                assert_true(skip_leb128(bytes, end, &at, &value));
        } while (name != 0 || form != 0);
    }
    free(bytes);
    return n;
}
