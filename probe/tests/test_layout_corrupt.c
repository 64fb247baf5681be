/* qaudit layout on damaged input (issue 14, "closed on bad input"): single-byte flips in the
 * DWARF of small binaries (gcc DWARF 5, clang DWARF 5, gcc DWARF 4), cut ELF files, a missing
 * .dwo, and the gate over a damaged binary. Each flip must end in one of three ways:
 *   - exit 2, nothing on stdout, one line on stderr naming the file;
 *   - exit 0 and exactly the original output (the byte was not one the layout depends on);
 *   - exit 0 and a different output that is still a layout a compiler can produce (the byte was a
 *     value that stays valid DWARF: a name's string offset, a reference to another type that
 *     fits), checked by plausible() below, which is written apart from the reader's own checks.
 * A flip that breaks the structure of the DWARF (an abbreviation's children flag made neither 0
 * nor 1, its tag made unknown: abbrev_bytes.c finds those bytes by hand) must end in exit 2.
 * Flips are drawn by a fixed xorshift generator from a fixed list of seeds. */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "abbrev_bytes.h"
#include "probe_fixture.h"

struct run {
    int status; /* exit status, 128 for a signal, 124 for the timeout */
    char *out, *err;
};

/* qaudit ARGS, stdout and stderr kept apart, at most 20 s. */
static struct run qaudit(const char *fmt, ...)
{
    char args[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    struct run r;
    r.status = sh("timeout 20 %s %s >%s/out 2>%s/err", QAUDIT, args, dir, dir);
    char path[200];
    snprintf(path, sizeof path, "%s/out", dir);
    r.out = slurp(path, NULL);
    snprintf(path, sizeof path, "%s/err", dir);
    r.err = slurp(path, NULL);
    return r;
}

static void run_free(struct run *r)
{
    free(r->out);
    free(r->err);
}

/* ---- the oracle: is a layout one a compiler can produce? ---- */

static long long field(json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static bool printable(const char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

/* A member's bits within its type: [from, to). */
static void bits_of(json_t *m, long long *from, long long *to)
{
    json_t *bit = json_object_get(m, "bit_offset");
    if (json_is_integer(bit)) {
        *from = json_integer_value(bit);
        *to = *from + field(m, "bit_size");
    } else {
        *from = field(m, "offset") * 8;
        *to = *from + field(m, "size") * 8;
    }
}

/* NULL when t is plausible, else why not (in why). */
static const char *implausible(json_t *t, char *why, size_t size)
{
    const char *name = json_string_value(json_object_get(t, "name"));
    long long bytes = field(t, "size"), align = field(t, "align"), end = 0;
    bool is_union = strcmp(json_string_value(json_object_get(t, "kind")), "union") == 0;
    if (align <= 0 || (align & (align - 1)) != 0)
        return snprintf(why, size, "%s: alignment %lld", name, align), why;
    if (!printable(name))
        return snprintf(why, size, "%s: an unprintable name", name), why;
    size_t i, j;
    json_t *m, *n, *members = json_object_get(t, "members");
    json_array_foreach(members, i, m)
    {
        const char *member = json_string_value(json_object_get(m, "name"));
        const char *type = json_string_value(json_object_get(m, "type"));
        long long from, to;
        bits_of(m, &from, &to);
        end = to > end ? to : end;
        if (from < 0 || to < from || to > bytes * 8)
            return snprintf(why, size, "%s.%s lies outside it", name, member), why;
        if (!printable(member) || (type && (!printable(type) || strchr(type, '?'))))
            return snprintf(why, size, "%s.%s: name or type '%s'", name, member, type), why;
        if (is_union || field(m, "depth") != 0 || json_is_true(json_object_get(m, "base")))
            continue;
        json_array_foreach(members, j, n)
        {
            long long a, b;
            bits_of(n, &a, &b);
            if (j < i && field(n, "depth") == 0 && !json_is_true(json_object_get(n, "base")) &&
                a < to && from < b && a < b && from < to)
                return snprintf(why, size, "%s: members %s and %s overlap", name,
                                json_string_value(json_object_get(n, "name")), member),
                       why;
        }
    }
    end = (end + 7) / 8;
    if (bytes >= end + align && bytes % align != 0)
        return snprintf(why, size, "%s: %lld bytes, %lld of padding, alignment %lld", name, bytes,
                        bytes - end, align),
               why;
    return NULL;
}

/* As many types as the original, each with as many members as its original (a damaged byte may
 * rename a type or member, retype or resize it, not make one vanish), each plausible. */
static bool plausible(const char *json, json_t *original, char *why, size_t size)
{
    json_error_t error;
    json_t *doc = json_loads(json, 0, &error);
    if (doc == NULL) {
        snprintf(why, size, "output is no JSON: %s", error.text);
        return false;
    }
    json_t *types = json_object_get(doc, "types"), *was = json_object_get(original, "types"), *t;
    size_t i;
    bool ok = json_array_size(types) == json_array_size(was);
    if (!ok)
        snprintf(why, size, "%zu types, not %zu", json_array_size(types), json_array_size(was));
    json_array_foreach(types, i, t)
    {
        size_t members = json_array_size(json_object_get(t, "members"));
        size_t before = json_array_size(json_object_get(json_array_get(was, i), "members"));
        if (ok && members != before) {
            snprintf(why, size, "%s: %zu members, not %zu",
                     json_string_value(json_object_get(t, "name")), members, before);
            ok = false;
        }
        if (ok && implausible(t, why, size) != NULL)
            ok = false;
    }
    json_decref(doc);
    return ok;
}

/* ---- the flips ---- */

/* exit 2, no output, and one line on stderr that names the file: NULL, or what is amiss. */
static const char *one_line_error(const struct run *r, const char *file)
{
    const char *newline = strchr(r->err, '\n');
    if (r->status != 2)
        return "the exit status is not 2";
    if (newline == NULL || newline[1] != '\0')
        return "stderr is not one line";
    if (strstr(r->err, file) == NULL)
        return "the error does not name the file";
    if (r->out[0] != '\0')
        return "a partial result on stdout with the error";
    return NULL;
}

static void expect_one_line_error(const struct run *r, const char *file, const char *what)
{
    const char *amiss = one_line_error(r, file);
    if (amiss != NULL)
        fail_msg("%s: %s (exit %d): %s%.300s", what, amiss, r->status, r->err, r->out);
}

static uint64_t xorshift(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

struct tally {
    int errors, identical, plausible, wrong; /* wrong: anything else (the test fails) */
    int broken; /* flips that broke the structure (each must be among the errors) */
    char first_wrong[600];
};

static void wrong(struct tally *tally, const char *fmt, ...)
{
    if (tally->wrong++ > 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tally->first_wrong, sizeof tally->first_wrong, fmt, ap);
    va_end(ap);
}

/* count flips of one byte each in .debug_info and .debug_abbrev of binary, drawn from seed. */
static void flip(const char *binary, uint64_t seed, int count, struct tally *tally)
{
    long info, info_size, abbrev, abbrev_size;
    section(binary, ".debug_info", &info, &info_size);
    section(binary, ".debug_abbrev", &abbrev, &abbrev_size);
    size_t size;
    char *original = slurp(binary, &size);
    char victim[200];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    spill(victim, original, size);
    struct run clean = qaudit("layout --format json %s", victim);
    assert_int_equal(clean.status, 0);
    json_t *doc = json_loads(clean.out, 0, NULL);
    assert_non_null(doc);
    static struct abbrev_bytes abbrevs[4096];
    size_t abbrev_count = abbrev_bytes(binary, abbrevs, sizeof abbrevs / sizeof abbrevs[0]);
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < count; i++) {
        uint64_t at = xorshift(&state) % (uint64_t)(info_size + abbrev_size);
        long offset = at < (uint64_t)info_size ? info + (long)at : abbrev + (long)at - info_size;
        unsigned char mask = (unsigned char)(xorshift(&state) % 255 + 1);
        original[offset] ^= (char)mask;
        spill(victim, original, size);
        original[offset] ^= (char)mask;
        struct run r = qaudit("layout --format json %s", victim);
        char what[300], why[300];
        snprintf(what, sizeof what, "%s, seed %llu, flip %d: byte 0x%lx ^ 0x%02x", binary,
                 (unsigned long long)seed, i, offset, mask);
        const char *amiss;
        bool broken = false;
        for (size_t a = 0; a < abbrev_count; a++)
            broken |=
                abbrevs[a].children_at == offset && (unsigned char)(original[offset] ^ mask) > 1;
        tally->broken += broken;
        if (broken && r.status != 2)
            wrong(tally, "%s: the children flag made 0x%02x, yet exit %d", what,
                  (unsigned char)(original[offset] ^ mask), r.status);
        else if (r.status == 2 && (amiss = one_line_error(&r, victim)) != NULL)
            wrong(tally, "%s: %s: %s", what, amiss, r.err);
        else if (r.status == 2)
            tally->errors++;
        else if (r.status == 0 && strcmp(r.out, clean.out) == 0)
            tally->identical++;
        else if (r.status == 0 && plausible(r.out, doc, why, sizeof why))
            tally->plausible++, print_message("  changed but plausible: %s\n", what);
        else
            wrong(tally, "%s: exit %d with a changed, impossible layout (%s)", what, r.status,
                  r.status == 0 ? why : r.err);
        run_free(&r);
    }
    json_decref(doc);
    run_free(&clean);
    free(original);
}

static void build(const char *compiler, const char *flags, const char *name)
{
    assert_int_equal(
        sh("cd %s && %s -std=c11 %s -o %s %s/shapes.c", dir, compiler, flags, name, FIXTURES), 0);
}

/* The experiment: 40 flips in a small gcc binary (seed 1). */
static void test_forty_flips(void **state)
{
    (void)state;
    setup_dir("corrupt");
    build("gcc", "-g", "gcc5");
    char binary[200];
    snprintf(binary, sizeof binary, "%s/gcc5", dir);
    struct tally tally = {0};
    flip(binary, 1, 40, &tally);
    print_message("40 flips: %d exit 2 (%d of them breaking the structure), %d identical, %d "
                  "changed but plausible, %d wrong\n",
                  tally.errors, tally.broken, tally.identical, tally.plausible, tally.wrong);
    cleanup_dir();
    if (tally.wrong > 0)
        fail_msg("%d of 40 flips wrong; the first: %s", tally.wrong, tally.first_wrong);
}

/* More flips, three producers, a fixed list of seeds. */
static void test_flips_of_three_producers(void **state)
{
    (void)state;
    static const uint64_t seeds[] = {2, 3, 5, 8, 13, 21};
    static const struct {
        const char *compiler, *flags, *name;
    } binaries[] = {{"gcc", "-g", "gcc5"}, {"clang", "-g", "clang5"}, {"gcc", "-gdwarf-4", "gcc4"}};
    setup_dir("corrupt");
    for (size_t b = 0; b < sizeof binaries / sizeof binaries[0]; b++) {
        build(binaries[b].compiler, binaries[b].flags, binaries[b].name);
        char binary[200];
        snprintf(binary, sizeof binary, "%s/%s", dir, binaries[b].name);
        struct tally tally = {0};
        for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
            flip(binary, seeds[s], 20, &tally);
        print_message("%s: %d exit 2 (%d of them breaking the structure), %d identical, %d "
                      "changed but plausible, %d wrong\n",
                      binaries[b].name, tally.errors, tally.broken, tally.identical,
                      tally.plausible, tally.wrong);
        if (tally.wrong > 0) {
            cleanup_dir();
            fail_msg("%s: %d of 120 flips wrong; the first: %s", binaries[b].name, tally.wrong,
                     tally.first_wrong);
        }
    }
    cleanup_dir();
}

/* Every abbreviation's children flag made neither 0 nor 1, and its tag made unknown (0x7f), in
 * three producers' binaries: each such file fails closed. libdw reads a flag of 2 as "no
 * children" and an unknown tag as any other, and reads on. */
static void test_structural_flips_fail_closed(void **state)
{
    (void)state;
    static const struct {
        const char *compiler, *flags, *name;
    } binaries[] = {{"gcc", "-g", "gcc5"}, {"clang", "-g", "clang5"}, {"gcc", "-gdwarf-4", "gcc4"}};
    setup_dir("corrupt");
    char binary[200], victim[200], what[300];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    for (size_t b = 0; b < sizeof binaries / sizeof binaries[0]; b++) {
        build(binaries[b].compiler, binaries[b].flags, binaries[b].name);
        snprintf(binary, sizeof binary, "%s/%s", dir, binaries[b].name);
        struct abbrev_bytes abbrevs[512];
        size_t n = abbrev_bytes(binary, abbrevs, sizeof abbrevs / sizeof abbrevs[0]), tags = 0;
        if (n < 10)
            fail_msg("%s: %zu abbreviations, fewer than the 10 expected", binary, n);
        size_t size;
        char *bytes = slurp(binary, &size);
        for (size_t a = 0; a < n; a++) {
            for (int kind = 0; kind < 2; kind++) {
                long at = kind == 0 ? abbrevs[a].children_at : abbrevs[a].tag_at;
                if (at < 0)
                    continue;
                char was = bytes[at];
                bytes[at] = (char)(kind == 0 ? 2 + (a * 37) % 254 : 0x7f);
                spill(victim, bytes, size);
                snprintf(what, sizeof what, "%s: abbreviation %zu's %s at 0x%lx made 0x%02x",
                         binary, a, kind == 0 ? "children flag" : "tag", at,
                         (unsigned char)bytes[at]);
                bytes[at] = was;
                tags += kind;
                struct run r = qaudit("layout --format json %s", victim);
                expect_one_line_error(&r, victim, what);
                run_free(&r);
            }
        }
        print_message("%s: %zu children flags and %zu tags broken, each exit 2\n", binaries[b].name,
                      n, tags);
        free(bytes);
    }
    cleanup_dir();
}

/* A cut ELF file is reported as cut, not as one without debug info. */
static void test_truncated_elf(void **state)
{
    (void)state;
    setup_dir("corrupt");
    build("gcc", "-g", "full");
    char full[200], cut[200];
    snprintf(full, sizeof full, "%s/full", dir);
    snprintf(cut, sizeof cut, "%s/cut", dir);
    long info, info_size;
    section(full, ".debug_info", &info, &info_size);
    size_t size;
    char *bytes = slurp(full, &size);
    /* Inside the ELF header's section table, inside .debug_info, and one byte short. */
    const size_t lengths[] = {100, 3000, (size_t)info + (size_t)info_size / 2, size - 1};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        spill(cut, bytes, lengths[i]);
        struct run r = qaudit("layout %s", cut);
        expect_one_line_error(&r, cut, "a cut file");
        if (strstr(r.err, "truncated or corrupt ELF") == NULL)
            fail_msg("cut at %zu: %s", lengths[i], r.err);
        run_free(&r);
        r = qaudit("layout --debug-file %s %s", cut, full);
        expect_one_line_error(&r, cut, "a cut --debug-file");
        run_free(&r);
    }
    free(bytes);
    cleanup_dir();
}

/* Files the layout fuzzer found. A section past the end of the file whose name holds a newline:
 * the error names it, still on one line. */
static void test_fuzzer_finds_fail_closed(void **state)
{
    (void)state;
    setup_dir("corrupt");
    const char *file = FIXTURES "/newline-section-name.elf";
    struct run r = qaudit("layout %s", file);
    expect_one_line_error(&r, file, "a section name with a newline");
    run_free(&r);
    /* A form byte flipped into DW_FORM_indirect: libdw, readelf and gdb read on, the member it
     * swallows goes missing (also a fuzzer find). */
    file = FIXTURES "/indirect-form.elf";
    r = qaudit("layout %s", file);
    expect_one_line_error(&r, file, "a form flipped into DW_FORM_indirect");
    run_free(&r);
    /* A unit whose header's length runs past the end of .debug_info: libdw does not hold it to
     * the section, and the step to the unit's end read unmapped memory (exit 139). */
    file = FIXTURES "/unit-length-past-section.elf";
    r = qaudit("layout %s", file);
    expect_one_line_error(&r, file, "a unit's length past its section");
    run_free(&r);
    cleanup_dir();
}

/* -gsplit-dwarf with the .dwo gone: exit 2 naming it, not an empty list. */
static void test_missing_dwo(void **state)
{
    (void)state;
    setup_dir("corrupt");
    build("gcc", "-g -gsplit-dwarf", "split");
    char binary[200];
    snprintf(binary, sizeof binary, "%s/split", dir);
    struct run r = qaudit("layout --format json %s", binary);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"holes\""));
    run_free(&r);
    assert_int_equal(sh("rm %s/split-shapes.dwo", dir), 0);
    r = qaudit("layout --format json %s", binary);
    expect_one_line_error(&r, binary, "a missing .dwo");
    assert_non_null(strstr(r.err, "split-shapes.dwo"));
    run_free(&r);
    cleanup_dir();
}

/* The gate cannot read the types of a damaged binary: exit 2, not a pass. */
static void test_gate_on_damaged_dwarf(void **state)
{
    (void)state;
    setup_dir("corrupt");
    build("gcc", "-g", "good");
    char good[200], bad[200], baseline[200];
    snprintf(good, sizeof good, "%s/good", dir);
    snprintf(bad, sizeof bad, "%s/bad", dir);
    snprintf(baseline, sizeof baseline, "%s/baseline.json", dir);
    struct run r = qaudit("gate --write-baseline %s --type holes --type outer %s", baseline, good);
    assert_int_equal(r.status, 0);
    run_free(&r);
    /* The abbreviation table's first entry gets an unknown tag. */
    long abbrev, abbrev_size;
    section(good, ".debug_abbrev", &abbrev, &abbrev_size);
    size_t size;
    char *bytes = slurp(good, &size);
    bytes[abbrev + 1] = 0x7f;
    spill(bad, bytes, size);
    free(bytes);
    r = qaudit("gate --baseline %s %s", baseline, bad);
    expect_one_line_error(&r, bad, "the gate on a damaged binary");
    run_free(&r);
    cleanup_dir();
}

/* The checks raise no false alarm on real programs nobody here wrote: libstdc++'s debug build
 * (C++, -O0 -g3, 181 units; scripts/deps.sh installs libstdc++6-12-dbg; the build of the
 * libstdc++ g++ links), and every detached debug file installed under /usr/lib/debug/.build-id:
 * at least libc6-dbg's (273 on Debian 12; scripts/deps.sh installs it), python3.11-dbg's,
 * valgrind-dbg's... when present. */
static void test_debian_debug_files_read(void **state)
{
    (void)state;
    setup_dir("corrupt");
    char libstdcxx[512];
    assert_int_equal(sh("l=$(realpath \"$(g++ -print-file-name=libstdc++.so)\") && "
                        "echo \"$(dirname \"$l\")/debug/$(basename \"$l\")\" >%s/libstdcxx",
                        dir),
                     0);
    snprintf(libstdcxx, sizeof libstdcxx, "%s/libstdcxx", dir);
    char *debug = slurp(libstdcxx, NULL);
    snprintf(libstdcxx, sizeof libstdcxx, "%.*s", (int)strcspn(debug, "\n"), debug);
    free(debug);
    if (access(libstdcxx, R_OK) != 0)
        fail_msg("%s missing: run scripts/deps.sh", libstdcxx);
    struct run r = qaudit("layout --format json %s", libstdcxx);
    if (r.status != 0)
        fail_msg("%s: exit %d: %s", libstdcxx, r.status, r.err);
    run_free(&r);
    int status =
        sh("n=0; for f in /usr/lib/debug/.build-id/*/*.debug; do [ -e \"$f\" ] || "
           "continue; %s layout \"$f\" >/dev/null 2>%s/err || { cat %s/err; exit 1; }; "
           "n=$((n + 1)); done; echo \"$n debug files read\"; [ \"$n\" -ge 200 ] || exit 3",
           QAUDIT, dir, dir);
    if (status == 3)
        fail_msg("fewer than 200 debug files under /usr/lib/debug/.build-id: is libc6-dbg "
                 "installed (scripts/deps.sh)?");
    assert_int_equal(status, 0);
    cleanup_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forty_flips),
        cmocka_unit_test(test_flips_of_three_producers),
        cmocka_unit_test(test_structural_flips_fail_closed),
        cmocka_unit_test(test_truncated_elf),
        cmocka_unit_test(test_fuzzer_finds_fail_closed),
        cmocka_unit_test(test_missing_dwo),
        cmocka_unit_test(test_gate_on_damaged_dwarf),
        cmocka_unit_test(test_debian_debug_files_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
