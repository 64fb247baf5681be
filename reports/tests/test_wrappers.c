/* What a site's "where" says: allocation wrappers recognised from the stacks at the edges of the
 * rule (exactly REPORT_WRAPPER_CALLERS callers and one fewer, a function that allocates for
 * itself, a chain of wrappers, --skip naming a caller several frames up, --skip none), C++
 * names shortened, the program's own frame named before the standard library's, and the blocks
 * held by design kept from the leaks. Reports are built by hand: each figure is known. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "content/reports_content.h"
#include "report_fixture.h"

/* hand_report's (/bin/prog, the program, and /lib/libc.so.6) with /lib64/ld-linux-x86-64.so.2
 * (2) and /usr/lib/libstdc++.so.6 (3), room for n sites. */
static struct report *new_report(size_t n)
{
    struct report *r = hand_report(n);
    r->modules = realloc(r->modules, 4 * sizeof *r->modules);
    r->modules[2] = (struct report_module){.path = strdup("/lib64/ld-linux-x86-64.so.2"),
                                           .build_id = strdup("")};
    r->modules[3] =
        (struct report_module){.path = strdup("/usr/lib/libstdc++.so.6"), .build_id = strdup("")};
    r->module_count = 4;
    return r;
}

/* A frame of the program calling from function (one call instruction per function and at);
 * "mod:+0xOFF" is a frame without a name in module mod (0-3) at OFF. */
static struct report_frame frame(const char *function, unsigned at)
{
    struct report_frame f = {0};
    unsigned module = 0;
    unsigned long long offset = 0;
    if (sscanf(function, "%u:+0x%llx", &module, &offset) == 2) {
        f.module = module;
        f.offset = offset;
        return f;
    }
    uint64_t h = 5381 + at;
    for (const char *c = function; *c; c++)
        h = h * 33 + (unsigned char)*c;
    f.module = 0;
    f.offset = h & 0xffffff;
    f.locations = calloc(1, sizeof *f.locations);
    f.locations[0].function = strdup(function);
    f.location_count = 1;
    return f;
}

/* A site: functions innermost first, allocs of size bytes each. */
static struct report_site *add(struct report *r, const char *const *functions, size_t n,
                               uint64_t allocs, uint64_t size)
{
    struct report_site *s = &r->sites[r->site_count++];
    s->stack.frames = calloc(n, sizeof *s->stack.frames);
    for (size_t i = 0; i < n; i++)
        s->stack.frames[i] = frame(functions[i], 0);
    s->stack.frame_count = n;
    s->allocs = allocs;
    s->bytes = allocs * size;
    s->est = (struct report_estimate){.allocs = (double)allocs, .bytes = (double)(allocs * size)};
    return s;
}

static void fold(struct report *r, bool recognise, const char *const *user, size_t user_count)
{
    report_fold(r, &(struct report_fold_settings){user, user_count, 0, recognise});
}

/* The site whose stack now starts at function, or NULL. */
static const struct report_site *site_at(const struct report *r, const char *function)
{
    for (size_t i = 0; i < r->site_count; i++) {
        const struct report_frame *f = &r->sites[i].stack.frames[0];
        if (f->location_count && strcmp(f->locations[0].function, function) == 0)
            return &r->sites[i];
    }
    return NULL;
}

static bool recognised(const struct report *r, const char *name)
{
    for (size_t i = 0; i < r->wrapper_count; i++)
        if (strcmp(r->wrappers[i].name, name) == 0)
            return true;
    return false;
}

static const char *const callers[] = {"parse", "accept", "respond", "log_line", "reload", "cache"};

/* callers_count callers of wrapper, each asking a size of its own. */
static struct report *wrapper_with(const char *wrapper, size_t callers_count, bool same_size)
{
    struct report *r = new_report(callers_count + 8);
    for (size_t i = 0; i < callers_count; i++)
        add(r, (const char *[]){wrapper, callers[i], "main"}, 3, 10, same_size ? 64 : 16 * (i + 1));
    return r;
}

static void four_callers_fold(void **state)
{
    (void)state;
    struct report *r = wrapper_with("xx_alloc", REPORT_WRAPPER_CALLERS, false);
    fold(r, true, NULL, 0);
    assert_true(recognised(r, "xx_alloc"));
    assert_int_equal(r->wrapper_count, 1);
    assert_int_equal(r->wrappers[0].callers, REPORT_WRAPPER_CALLERS);
    for (size_t i = 0; i < REPORT_WRAPPER_CALLERS; i++) {
        const struct report_site *s = site_at(r, callers[i]);
        assert_non_null(s);
        assert_string_equal(s->wrapper, "xx_alloc");
        assert_int_equal(s->folded, 1);
    }
    hand_report_free(r);
}

static void three_callers_stay(void **state)
{
    (void)state;
    struct report *r = wrapper_with("xx_alloc", REPORT_WRAPPER_CALLERS - 1, false);
    fold(r, true, NULL, 0);
    assert_int_equal(r->wrapper_count, 0);
    for (size_t i = 0; i < r->site_count; i++)
        assert_string_equal(r->sites[i].stack.frames[0].locations[0].function, "xx_alloc");
    hand_report_free(r);
}

/* Two runs compared fold alike: xx_alloc, recognised in the run where 4 call it, folds in the
 * run where 3 do, so that their sites match by name. */
static void two_runs_fold_alike(void **state)
{
    (void)state;
    struct report *four = wrapper_with("xx_alloc", REPORT_WRAPPER_CALLERS, false);
    struct report *three = wrapper_with("xx_alloc", REPORT_WRAPPER_CALLERS - 1, false);
    fold(four, true, NULL, 0);
    fold(three, true, NULL, 0);
    assert_int_equal(three->wrapper_count, 0);
    report_fold_alike(three, four);
    report_fold_alike(four, three);
    assert_int_equal(three->wrapper_count, 1);
    assert_int_equal(four->wrapper_count, 1);
    for (size_t i = 0; i < REPORT_WRAPPER_CALLERS - 1; i++)
        assert_non_null(site_at(three, callers[i]));
    assert_null(site_at(three, "xx_alloc"));
    hand_report_free(four);
    hand_report_free(three);
}

/* --skip none: not even a wrapper of six callers folds. */
static void skip_none_keeps_them(void **state)
{
    (void)state;
    struct report *r = wrapper_with("xx_alloc", 6, false);
    fold(r, false, NULL, 0);
    assert_int_equal(r->wrapper_count, 0);
    assert_non_null(site_at(r, "xx_alloc"));
    hand_report_free(r);
}

/* One size for six callers: it allocates an object of its own. */
static void same_size_for_every_caller_stays(void **state)
{
    (void)state;
    struct report *r = wrapper_with("conn_alloc", 6, true);
    fold(r, true, NULL, 0);
    assert_int_equal(r->wrapper_count, 0);
    hand_report_free(r);
}

/* Six callers and their sizes forwarded, but it also allocates through a function of the
 * program's own (its table): not a wrapper; nor is a function whose name does not say it
 * allocates (a file name kept for six callers). */
static void allocating_for_itself_stays(void **state)
{
    (void)state;
    struct report *r = wrapper_with("pool_alloc", 6, false);
    add(r, (const char *[]){"grow_table", "pool_alloc", "parse", "main"}, 4, 1, 4096);
    for (size_t i = 0; i < 6; i++)
        add(r, (const char *[]){"open_file", callers[i], "main"}, 3, 2, 10 + i);
    fold(r, true, NULL, 0);
    assert_false(recognised(r, "pool_alloc"));
    assert_false(recognised(r, "open_file"));
    assert_non_null(site_at(r, "pool_alloc"));
    assert_non_null(site_at(r, "open_file"));
    hand_report_free(r);
}

/* The allocator's own call without a symbol under MemoryContextAlloc under palloc, for callers
 * of palloc: each link has a single caller, the chain as a whole those of palloc. */
static struct report *chain_for(size_t callers_count)
{
    struct report *r = new_report(callers_count);
    for (size_t i = 0; i < callers_count; i++)
        add(r, (const char *[]){"0:+0x5c7860", "MemoryContextAlloc", "palloc", callers[i], "main"},
            5, 3, 24 * (i + 1));
    fold(r, true, NULL, 0);
    return r;
}

/* For five callers all three fold and each site is its caller of palloc. */
static void a_chain_two_deep_folds(void **state)
{
    (void)state;
    struct report *r = chain_for(5);
    assert_true(recognised(r, "prog+0x5c7860"));
    assert_true(recognised(r, "MemoryContextAlloc"));
    assert_true(recognised(r, "palloc"));
    for (size_t i = 0; i < 5; i++) {
        const struct report_site *s = site_at(r, callers[i]);
        assert_non_null(s);
        assert_int_equal(s->folded, 3);
        assert_string_equal(s->wrapper, "palloc");
    }
    hand_report_free(r);
}

/* For three callers nothing folds. */
static void a_chain_for_three_callers_stays(void **state)
{
    (void)state;
    struct report *r = chain_for(3);
    assert_int_equal(r->wrapper_count, 0);
    hand_report_free(r);
}

/* --skip naming a caller several frames up folds it and everything inside it, as pprof's
 * drop_frames; a default glob folds leading frames only. */
static void skip_names_a_caller_frames_up(void **state)
{
    (void)state;
    struct report *r = new_report(4);
    add(r, (const char *[]){"slab_carve", "slab_refill", "pool_get", "handle", "main"}, 5, 4, 32);
    add(r, (const char *[]){"slab_carve", "pool_get", "serve", "main"}, 4, 2, 48);
    const char *user[] = {"pool_get"};
    fold(r, false, user, 1);
    assert_non_null(site_at(r, "handle"));
    assert_non_null(site_at(r, "serve"));
    assert_string_equal(site_at(r, "handle")->wrapper, "pool_get");
    assert_int_equal(site_at(r, "handle")->folded, 3);
    hand_report_free(r);

    r = new_report(4);
    add(r, (const char *[]){"slab_carve", "slab_refill", "pool_get", "handle", "main"}, 5, 4, 32);
    report_fold(r, &(struct report_fold_settings){user, 1, 1, false}); /* as a default */
    assert_non_null(site_at(r, "slab_carve"));
    hand_report_free(r);
}

static void names_are_shortened(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"std::vector<int, std::allocator<int> >::push_back", "std::vector<int>::push_back"},
        {"std::map<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
         ">, std::vector<int, std::allocator<int> >, std::less<std::__cxx11::basic_string<char, "
         "std::char_traits<char>, std::allocator<char> > >, "
         "std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
         "std::allocator<char> > const, std::vector<int, std::allocator<int> > > > "
         ">::operator[]",
         "std::map<std::string, std::vector<int>>::operator[]"},
        {"std::_Rb_tree<std::__cxx11::basic_string<char, std::char_traits<char>, "
         "std::allocator<char> >, std::pair<std::__cxx11::basic_string<char, "
         "std::char_traits<char>, std::allocator<char> > const, int>, "
         "std::_Select1st<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
         "std::allocator<char> > const, int> >, std::less<std::__cxx11::basic_string<char, "
         "std::char_traits<char>, std::allocator<char> > >, "
         "std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
         "std::allocator<char> > const, int> > >::_M_create_node<int>",
         "std::_Rb_tree<...>::_M_create_node<int>"},
        {"std::allocator_traits<std::allocator<int> >::allocate",
         "std::allocator_traits<std::allocator<int>>::allocate"},
        {"operator<< <char>", "operator<< <char>"},
        {"Foo::operator<", "Foo::operator<"},
        {"Foo::operator->", "Foo::operator->"},
        {"cmp<int>::operator<=>", "cmp<int>::operator<=>"},
        {"broken<int", "broken<int"},
        {"<alloc::vec::Vec<T, A> as core::ops::drop::Drop>::drop",
         "<alloc::vec::Vec<T, A> as core::ops::drop::Drop>::drop"},
        {"serve", "serve"},
        {"", ""},
    };
    char out[512];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_string_equal(report_short_name(cases[i][0], out, sizeof out), cases[i][1]);
    assert_string_equal(report_short_name("std::vector<int, std::allocator<int> >", out, 8),
                        "std::ve");
}

/* A C++ site: the allocator inlined into the map's operator[], inlined into serve. */
static struct report *cxx_report(void)
{
    struct report *r = new_report(2);
    struct report_site *s = &r->sites[r->site_count++];
    s->stack.frames = calloc(2, sizeof *s->stack.frames);
    struct report_frame *f = &s->stack.frames[0];
    f->module = 0;
    f->offset = 0x20e1;
    f->locations = calloc(3, sizeof *f->locations);
    f->locations[0] =
        (struct report_location){strdup("std::__new_allocator<int>::allocate"),
                                 strdup("/usr/include/c++/12/bits/new_allocator.h"), 137, true};
    f->locations[1] = (struct report_location){
        strdup("std::map<std::__cxx11::basic_string<char, std::char_traits<char>, "
               "std::allocator<char> >, int, std::less<std::__cxx11::basic_string<char, "
               "std::char_traits<char>, std::allocator<char> > >, "
               "std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
               "std::allocator<char> > const, int> > >::operator[]"),
        strdup("/usr/include/c++/12/bits/stl_map.h"), 530, true};
    f->locations[2] = (struct report_location){strdup("serve"), strdup("/src/cx.cpp"), 10, false};
    f->location_count = 3;
    s->stack.frames[1] = frame("main", 0);
    s->stack.frame_count = 2;
    s->allocs = 2000;
    s->bytes = 2000 * 64;
    s->est = (struct report_estimate){.allocs = 2000, .bytes = 2000 * 64};
    return r;
}

static void the_program_frame_names_a_cxx_site(void **state)
{
    (void)state;
    struct report *r = cxx_report();
    size_t n = 0;
    while (report_default_skip[n] != NULL)
        n++;
    report_fold(r, &(struct report_fold_settings){report_default_skip, n, n, true});
    char where[4096];
    report_site_where(r, &r->sites[0], false, where, sizeof where);
    assert_string_equal(where, "std::map<std::string, int>::operator[] <- serve (cx.cpp:10)");
    report_site_where(r, &r->sites[0], true, where, sizeof where);
    assert_non_null(strstr(where, "std::__cxx11::basic_string<char, std::char_traits<char>"));
    assert_non_null(strstr(where, "<- serve (cx.cpp:10)"));
    hand_report_free(r);
}

/* A frame without a name is followed by its first caller that has one. */
static void a_frame_without_a_name_names_its_caller(void **state)
{
    (void)state;
    struct report *r = new_report(1);
    add(r, (const char *[]){"0:+0x59535f", "RelationCacheInitializePhase3", "main"}, 3, 5, 64);
    fold(r, true, NULL, 0);
    char where[512];
    report_site_where(r, &r->sites[0], false, where, sizeof where);
    assert_string_equal(where, "prog+0x59535f <- RelationCacheInitializePhase3");
    hand_report_free(r);
}

/* A live site whose stack runs from the loader: frames in ld.so, the innermost in libstdc++. */
static struct report_site *start_up_site(struct report *r, bool through_main)
{
    struct report_site *s = &r->sites[r->site_count++];
    s->stack.frames = calloc(4, sizeof *s->stack.frames);
    s->stack.frames[0] = (struct report_frame){3, 0xa57ba, NULL, 0};
    s->stack.frames[1] = (struct report_frame){through_main ? 0 : 2, 0x4a1e, NULL, 0};
    s->stack.frames[2] = (struct report_frame){2, 0x4b04, NULL, 0};
    s->stack.frames[3] = (struct report_frame){2, 0x1aba0, NULL, 0};
    s->stack.frame_count = 4;
    s->allocs = 1;
    s->bytes = s->live_bytes = 72704;
    s->est = (struct report_estimate){
        .allocs = 1, .bytes = 72704, .live_bytes = 72704, .live_blocks = 1};
    return s;
}

static void start_up_blocks_are_held_by_design(void **state)
{
    (void)state;
    struct report *r = new_report(5);
    start_up_site(r, false);
    start_up_site(r, true); /* a frame of the program's own: not start-up */
    struct report_site *leak = add(r, (const char *[]){"leak_record", "main"}, 2, 3, 40);
    leak->live_bytes = 120;
    leak->est.live_bytes = 120;
    leak->est.live_blocks = 3;
    struct report_site *buffer =
        add(r, (const char *[]){"1:+0x758cc", "printf", "main"}, 3, 1, 4096);
    buffer->stack.frames[0].locations = calloc(1, sizeof *buffer->stack.frames[0].locations);
    buffer->stack.frames[0].locations[0].function = strdup("_IO_file_doallocate");
    buffer->stack.frames[0].location_count = 1;
    buffer->live_bytes = 4096;
    buffer->est.live_bytes = 4096;
    buffer->est.live_blocks = 1;
    r->totals.allocs = r->totals.live_blocks = 6;
    r->totals.live_bytes = 72704 * 2 + 120 + 4096;
    fold(r, true, NULL, 0);
    size_t design = 0;
    for (size_t i = 0; i < r->site_count; i++) {
        const struct report_site *s = &r->sites[i];
        if (s->by_design == NULL)
            continue;
        design++;
        assert_true(strstr(s->by_design, "libstdc++.so.6's initialisation before main") ||
                    strstr(s->by_design, "stdio stream's buffer"));
    }
    assert_int_equal(design, 2);
    char *text = render(r, REPORT_TEXT);
    const char *largest = strstr(text, "Largest leak: ");
    assert_non_null(largest); /* the block a frame of the program's own took, not the start-up's */
    assert_true(strncmp(strchr(largest, ',') + 2, "prog+0x4a1e", 11) == 0);
    assert_non_null(strstr(text, "Held by design, not leaks: 75.00 KiB in 2 blocks"));
    free(text);
    hand_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(four_callers_fold),
        cmocka_unit_test(three_callers_stay),
        cmocka_unit_test(skip_none_keeps_them),
        cmocka_unit_test(two_runs_fold_alike),
        cmocka_unit_test(same_size_for_every_caller_stays),
        cmocka_unit_test(allocating_for_itself_stays),
        cmocka_unit_test(a_chain_two_deep_folds),
        cmocka_unit_test(a_chain_for_three_callers_stays),
        cmocka_unit_test(skip_names_a_caller_frames_up),
        cmocka_unit_test(names_are_shortened),
        cmocka_unit_test(the_program_frame_names_a_cxx_site),
        cmocka_unit_test(a_frame_without_a_name_names_its_caller),
        cmocka_unit_test(start_up_blocks_are_held_by_design),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
