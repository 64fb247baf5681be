/* Every size-class model against its real allocator (Debian's libmimalloc2.0, libjemalloc2,
 * libtcmalloc-minimal4, and glibc itself): for every size from 1 to 4096 and a set of larger
 * ones, the modelled usable size must be what malloc_usable_size reports, and blocks must be at
 * least as aligned as the model says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "probe/classes.h"

static const uint64_t larger[] = {4097,  5000,   8192,   10000,  16385,  32768,  65536,
                                  65537, 100000, 131072, 131073, 200000, 262144, 1000000};

static void check_model(enum allocator a)
{
    size_t n = 4096 + sizeof larger / sizeof larger[0];
    uint64_t *sizes = malloc(n * sizeof *sizes);
    for (uint64_t i = 0; i < 4096; i++)
        sizes[i] = i + 1;
    for (size_t i = 0; i < sizeof larger / sizeof larger[0]; i++)
        sizes[4096 + i] = larger[i];
    struct probe_result *seen = calloc(n, sizeof *seen);
    const char *library = probe_class_models[a].library;
    if (library != NULL && access(library, R_OK) != 0)
        fail_msg("%s is missing: scripts/deps.sh installs it", library);
    char error[512];
    if (!probe_class_probe(PROBE_EXE, library, sizes, n, seen, error, sizeof error))
        fail_msg("%s", error);
    for (size_t i = 0; i < n; i++) {
        struct size_class c;
        assert_true(probe_class_of(a, sizes[i], &c));
        /* glibc may map a request from 128 KiB on (the threshold moves at run time). */
        bool mapped = a == ALLOC_GLIBC && sizes[i] >= 128 * 1024 &&
                      seen[i].usable == ((sizes[i] + 16 + 4095) & ~(uint64_t)4095) - 16;
        if (c.usable != seen[i].usable && !mapped)
            fail_msg("%s: size %llu: model usable %llu, real %llu", probe_class_models[a].name,
                     (unsigned long long)sizes[i], (unsigned long long)c.usable,
                     (unsigned long long)seen[i].usable);
        if (seen[i].align < c.align)
            fail_msg("%s: size %llu: model alignment %llu, real %llu", probe_class_models[a].name,
                     (unsigned long long)sizes[i], (unsigned long long)c.align,
                     (unsigned long long)seen[i].align);
        assert_true(c.reserved >= sizes[i]);
    }
    free(sizes);
    free(seen);
}

static void test_glibc(void **state)
{
    (void)state, check_model(ALLOC_GLIBC);
}
static void test_mimalloc(void **state)
{
    (void)state, check_model(ALLOC_MIMALLOC);
}
static void test_jemalloc(void **state)
{
    (void)state, check_model(ALLOC_JEMALLOC);
}
static void test_tcmalloc(void **state)
{
    (void)state, check_model(ALLOC_TCMALLOC);
}

/* The figures the audit is about: the connection in each build, under each allocator. */
static void test_connection_classes(void **state)
{
    (void)state;
    struct size_class c;
    static const struct {
        uint64_t size;
        uint64_t glibc, mimalloc, jemalloc, tcmalloc;
    } rows[] = {{184, 192, 192, 192, 192}, {176, 192, 192, 192, 176}, {232, 240, 256, 256, 240}};
    for (size_t i = 0; i < 3; i++) {
        probe_class_of(ALLOC_GLIBC, rows[i].size, &c);
        assert_int_equal(c.reserved, rows[i].glibc);
        probe_class_of(ALLOC_MIMALLOC, rows[i].size, &c);
        assert_int_equal(c.reserved, rows[i].mimalloc);
        probe_class_of(ALLOC_JEMALLOC, rows[i].size, &c);
        assert_int_equal(c.reserved, rows[i].jemalloc);
        probe_class_of(ALLOC_TCMALLOC, rows[i].size, &c);
        assert_int_equal(c.reserved, rows[i].tcmalloc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glibc),
        cmocka_unit_test(test_mimalloc),
        cmocka_unit_test(test_jemalloc),
        cmocka_unit_test(test_tcmalloc),
        cmocka_unit_test(test_connection_classes),
    };
    return cmocka_run_group_tests_name("classes", tests, NULL, NULL);
}
