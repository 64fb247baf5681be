/* Layout invariants every compiler keeps: a member lies inside its type, a bit-field inside its
 * type's bits, and outside unions no two data members share a byte (bit-fields share storage
 * units, so theirs are compared by bit). Base classes are left out of the overlap test: an empty
 * base shares its address with the first member (the empty base optimization). */
#include "probe_reading.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether s is UTF-8 text without control characters (no overlong forms or surrogates are looked
 * for: a flipped byte breaks the sequence structure, which is what this catches). Compilers
 * write identifiers in UTF-8, and JSON output cannot carry anything else. */
static bool is_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int follow = *p < 0x80             ? 0
                     : (*p & 0xe0) == 0xc0 ? 1
                     : (*p & 0xf0) == 0xe0 ? 2
                     : (*p & 0xf8) == 0xf0 ? 3
                                           : -1;
        if (follow < 0 || *p < 0x20 || *p == 0x7f) /* no identifier holds control characters */
            return false;
        for (p++; follow > 0; follow--, p++)
            if ((*p & 0xc0) != 0x80)
                return false;
    }
    return true;
}

static const char *not_utf8(const struct layout_type *t, char *why, size_t size)
{
    const char *bad = is_utf8(t->name) ? NULL : "its name";
    for (size_t i = 0; i < t->member_count && bad == NULL; i++)
        if (!is_utf8(t->members[i].name) ||
            (t->members[i].type != NULL && !is_utf8(t->members[i].type)))
            bad = "the name or type of a member";
    if (bad == NULL)
        return NULL;
    snprintf(why, size, "%s of %s %s is not UTF-8 text", bad, t->kind,
             is_utf8(t->name) ? t->name : "(unprintable)");
    return why;
}

/* A member's extent in bits from the start of its type. */
static void extent(const struct layout_member *m, uint64_t *from, uint64_t *to)
{
    if (m->bit_offset >= 0) { /* a bit-field, of 0 bits too (rustc 1.63 so marks a [u8] tail) */
        *from = (uint64_t)m->bit_offset;
        *to = *from + m->bit_size;
    } else {
        *from = m->offset * 8;
        *to = *from + m->size * 8;
    }
}

static const char *outside(const struct layout_type *t, char *why, size_t size)
{
    for (size_t i = 0; i < t->member_count; i++) {
        const struct layout_member *m = &t->members[i];
        uint64_t from, to;
        extent(m, &from, &to);
        /* Offsets near 2^64 wrap when multiplied: compare bytes first. */
        if (m->offset > t->size || to < from || to > t->size * 8 || t->size > UINT64_MAX / 8) {
            snprintf(why, size,
                     "member %s (offset %" PRIu64 ", size %" PRIu64
                     ") lies past the end of %s %s (%" PRIu64 " bytes)",
                     m->name, m->offset, m->size, t->kind, t->name, t->size);
            return why;
        }
    }
    return NULL;
}

static int by_start(const void *a, const void *b)
{
    uint64_t x, y, end;
    extent(*(const struct layout_member *const *)a, &x, &end);
    extent(*(const struct layout_member *const *)b, &y, &end);
    return x < y ? -1 : x > y;
}

/* Two top-level data members sharing a bit, outside a union. */
static const char *overlapping(const struct layout_type *t, char *why, size_t size)
{
    if (strcmp(t->kind, "union") == 0 || t->member_count < 2)
        return NULL;
    const struct layout_member **order = malloc(t->member_count * sizeof *order);
    if (order == NULL)
        return NULL; /* no memory to check with: the read itself succeeded */
    size_t n = 0;
    for (size_t i = 0; i < t->member_count; i++)
        if (t->members[i].depth == 0 && !t->members[i].is_base)
            order[n++] = &t->members[i];
    qsort(order, n, sizeof *order, by_start);
    const char *problem = NULL;
    uint64_t reach = 0; /* the furthest bit any member so far extends to */
    const struct layout_member *reacher = NULL;
    for (size_t i = 0; i < n && problem == NULL; i++) {
        uint64_t from, to;
        extent(order[i], &from, &to);
        if (from == to)
            continue;
        if (reacher != NULL && from < reach) {
            snprintf(why, size, "members %s and %s of %s %s overlap at offset %" PRIu64,
                     reacher->name, order[i]->name, t->kind, t->name, from / 8);
            problem = why;
        }
        if (to > reach) {
            reach = to;
            reacher = order[i];
        }
    }
    free(order);
    return problem;
}

/* A member whose type the spelling could not name: DWARF lacks a name it requires (a base type
 * or typedef without one) or the type is of a kind no C or C++ member has. */
static const char *unspelled(const struct layout_type *t, char *why, size_t size)
{
    for (size_t i = 0; i < t->member_count; i++) {
        if (t->members[i].type != NULL && strchr(t->members[i].type, '?') != NULL) {
            snprintf(why, size, "the type of member %s of %s %s cannot be spelled (%s)",
                     t->members[i].name, t->kind, t->name, t->members[i].type);
            return why;
        }
    }
    return NULL;
}

/* Size and alignment as compilers make them: a power-of-two alignment, and tail padding of an
 * alignment or more only up to a multiple of it (aligned(N) pads to a multiple of N, which DWARF 4
 * does not state; #pragma pack(N) pads less than the alignment derived here, which it does not
 * state either: valgrind's vki_dirent64 is 276 bytes with 8-byte members). A size without
 * members is possible too: the kernel's bpf_timer holds only unnamed bit-fields, which DWARF
 * leaves out. */
static const char *badly_sized(const struct layout_type *t, char *why, size_t size)
{
    uint64_t end = 0; /* the furthest byte a member reaches */
    for (size_t i = 0; i < t->member_count; i++) {
        uint64_t from, to;
        extent(&t->members[i], &from, &to);
        end = to > end ? to : end;
    }
    end = (end + 7) / 8;
    if (t->align == 0 || (t->align & (t->align - 1)) != 0)
        snprintf(why, size, "%s %s has the alignment %" PRIu64 ", no power of two", t->kind,
                 t->name, t->align);
    else if (t->size >= end + t->align && t->size % t->align != 0)
        snprintf(why, size,
                 "%s %s has %" PRIu64 " bytes, %" PRIu64 " of them tail padding, yet no "
                 "multiple of its alignment %" PRIu64,
                 t->kind, t->name, t->size, t->size - end, t->align);
    else
        return NULL;
    return why;
}

const char *probe_layout_type_problem(const struct layout_type *t, char *why, size_t size)
{
    const char *problem = not_utf8(t, why, size);
    if (problem == NULL)
        problem = outside(t, why, size);
    if (problem == NULL)
        problem = unspelled(t, why, size);
    if (problem == NULL)
        problem = badly_sized(t, why, size);
    return problem ? problem : overlapping(t, why, size);
}

bool probe_layout_checked(const struct layout_set *set, char *error, size_t size)
{
    probe_dwarf_errors_release(); /* the walk is over */
    const char *dwarf = probe_dwarf_errors_first();
    if (dwarf != NULL) {
        snprintf(error, size, "%s: %s", set->binary, dwarf);
        return false;
    }
    char why[512];
    for (size_t i = 0; i < set->count; i++) {
        if (probe_layout_type_problem(&set->types[i], why, sizeof why) != NULL) {
            snprintf(error, size, "%s: corrupt DWARF: %s", set->binary, why);
            return false;
        }
    }
    return true;
}
