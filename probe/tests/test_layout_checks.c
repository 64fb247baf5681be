/* The layout reader's fail-closed checks one at a time, on inputs built here: each check of an
 * abbreviation table (abbrev_check.c) on a small table with one defect, and each invariant of a
 * layout (validate.c) on a type with one defect, each next to the same input whole, which must
 * pass. test_layout_corrupt reaches these checks through damaged binaries, where one check often
 * stands in for another; here each must fire by itself (make mutants disables them one by one). */
#include <dwarf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "reading/probe_reading.h"

/* ---- abbreviation tables ---- */

/* A C unit's table, as GCC writes one for a struct of two ints: 1 the unit (children), 2 a
 * struct (children), 3 a member, 4 a base type. Single-byte LEB128 numbers throughout, so that
 * each case changes one byte at a known place. */
enum { UNIT_CHILDREN = 2, STRUCT_TAG = 10, STRUCT_CHILDREN = 11, MEMBER_CHILDREN = 20 };
static const unsigned char table[] = {1,
                                      DW_TAG_compile_unit,
                                      DW_CHILDREN_yes,
                                      DW_AT_producer,
                                      DW_FORM_string,
                                      DW_AT_language,
                                      DW_FORM_data1,
                                      0,
                                      0,
                                      /* [9] */ 2,
                                      DW_TAG_structure_type,
                                      DW_CHILDREN_yes,
                                      DW_AT_name,
                                      DW_FORM_string,
                                      DW_AT_byte_size,
                                      DW_FORM_data1,
                                      0,
                                      0,
                                      /* [18] */ 3,
                                      DW_TAG_member,
                                      DW_CHILDREN_no,
                                      DW_AT_name,
                                      DW_FORM_string,
                                      DW_AT_type,
                                      DW_FORM_ref4,
                                      DW_AT_data_member_location,
                                      DW_FORM_data1,
                                      0,
                                      0,
                                      /* [29] */ 4,
                                      DW_TAG_base_type,
                                      DW_CHILDREN_no,
                                      DW_AT_byte_size,
                                      DW_FORM_data1,
                                      DW_AT_encoding,
                                      DW_FORM_data1,
                                      DW_AT_name,
                                      DW_FORM_string,
                                      0,
                                      0,
                                      /* [40] */ 0};

/* The problem probe_abbrev_table_problem finds in table with byte at set to value (at < 0: none).
 */
static const char *problem_with(int at, unsigned char value, enum abbrev_language c, char *why,
                                size_t size)
{
    static unsigned char copy[sizeof table];
    memcpy(copy, table, sizeof table);
    if (at >= 0)
        copy[at] = value;
    const char *problem = probe_abbrev_table_problem(copy, copy + sizeof copy, c, why, size);
    if (problem != NULL && problem != why)
        snprintf(why, size, "%s", problem);
    return problem ? why : NULL;
}

/* The table with one byte changed is refused with words in the reason. */
static void expect_refused(int at, unsigned char value, enum abbrev_language c, const char *words)
{
    char why[200] = "";
    if (problem_with(at, value, c, why, sizeof why) == NULL)
        fail_msg("byte %d = 0x%02x: accepted, wanted \"%s\"", at, value, words);
    if (strstr(why, words) == NULL)
        fail_msg("byte %d = 0x%02x: \"%s\" does not say \"%s\"", at, value, why, words);
}

static void test_a_whole_table_passes(void **state)
{
    (void)state;
    char why[200];
    assert_null(problem_with(-1, 0, ABBREV_C, why, sizeof why));
    assert_null(problem_with(-1, 0, ABBREV_OTHER, why, sizeof why));
}

static void test_children_flag_neither_0_nor_1(void **state)
{
    (void)state;
    for (unsigned v = 2; v < 256; v += 37)
        expect_refused(STRUCT_CHILDREN, (unsigned char)v, ABBREV_C, "neither 0 nor 1");
    expect_refused(UNIT_CHILDREN, 0x80, ABBREV_OTHER, "neither 0 nor 1");
}

static void test_children_on_a_childless_tag(void **state)
{
    (void)state;
    expect_refused(MEMBER_CHILDREN, DW_CHILDREN_yes, ABBREV_C, "which that tag never has");
}

static void test_unknown_tag(void **state)
{
    (void)state;
    expect_refused(STRUCT_TAG, 0x7f, ABBREV_C, "unknown tag");
    expect_refused(STRUCT_TAG, 0x06, ABBREV_C, "unknown tag"); /* reserved in DWARF 5 */
}

static void test_cplusplus_tag_in_a_c_unit(void **state)
{
    (void)state;
    char why[200];
    expect_refused(STRUCT_TAG, DW_TAG_class_type, ABBREV_C, "C++ tag");
    assert_null(problem_with(STRUCT_TAG, DW_TAG_class_type, ABBREV_OTHER, why, sizeof why));
}

static void test_attribute_in_a_form_of_another_class(void **state)
{
    (void)state;
    expect_refused(13, DW_FORM_data1, ABBREV_C, "does not fit it");  /* the struct's name */
    expect_refused(15, DW_FORM_string, ABBREV_C, "does not fit it"); /* its byte size */
}

static void test_no_such_form_or_attribute(void **state)
{
    (void)state;
    expect_refused(13, 0x7f, ABBREV_C, "is no form");
    expect_refused(12, 0x05, ABBREV_C, "is no attribute"); /* reserved */
    expect_refused(13, DW_FORM_indirect, ABBREV_C, "no compiler emits it");
    expect_refused(15, DW_FORM_indirect, ABBREV_C, "no compiler emits it"); /* where data1 was */
}

static void test_attribute_no_die_of_the_tag_has(void **state)
{
    (void)state;
    /* a base type's byte size become a member's place, a struct's become a unit's language */
    expect_refused(32, DW_AT_data_member_location, ABBREV_C, "which no DIE of that tag has");
    expect_refused(14, DW_AT_language, ABBREV_C, "which no DIE of that tag has");
}

static void test_sibling_without_children(void **state)
{
    (void)state;
    static unsigned char copy[sizeof table];
    memcpy(copy, table, sizeof table);
    copy[12] = DW_AT_sibling; /* the struct's name become a sibling, in form ref4: fine */
    copy[13] = DW_FORM_ref4;
    char why[200] = "";
    assert_null(probe_abbrev_table_problem(copy, copy + sizeof copy, ABBREV_C, why, sizeof why));
    copy[STRUCT_CHILDREN] = DW_CHILDREN_no; /* a sibling is useless without children */
    const char *problem =
        probe_abbrev_table_problem(copy, copy + sizeof copy, ABBREV_C, why, sizeof why);
    assert_non_null(problem);
    assert_non_null(strstr(why, "a sibling but no children"));
}

/* What Go's linker writes and C compilers do not: an interface's typedef with a children flag (its
 * list of children empty), a function type with a size. Accepted in a Go unit only: elsewhere
 * they are damage (a flag or an attribute code changed). */
static const unsigned char go_table[] = {1,
                                         DW_TAG_typedef,
                                         DW_CHILDREN_yes,
                                         DW_AT_name,
                                         DW_FORM_string,
                                         DW_AT_type,
                                         DW_FORM_ref_addr,
                                         0,
                                         0,
                                         /* [9] */ 2,
                                         DW_TAG_subroutine_type,
                                         DW_CHILDREN_yes,
                                         DW_AT_name,
                                         DW_FORM_string,
                                         DW_AT_byte_size,
                                         DW_FORM_udata,
                                         0,
                                         0,
                                         0};

static void test_go_units_habits(void **state)
{
    (void)state;
    char why[200] = "";
    const unsigned char *end = go_table + sizeof go_table;
    assert_null(probe_abbrev_table_problem(go_table, end, ABBREV_GO, why, sizeof why));
    assert_non_null(probe_abbrev_table_problem(go_table, end, ABBREV_C, why, sizeof why));
    assert_non_null(strstr(why, "abbreviation 1 of tag 0x16 has children"));
    assert_non_null(probe_abbrev_table_problem(go_table + 9, end, ABBREV_OTHER, why, sizeof why));
    assert_non_null(strstr(why, "which no DIE of that tag has"));
}

static void test_cut_or_unterminated_table(void **state)
{
    (void)state;
    char why[200];
    const char *p =
        probe_abbrev_table_problem(table, table + sizeof table - 1, ABBREV_C, why, sizeof why);
    assert_non_null(p);
    assert_non_null(strstr(p, "ends without its closing null entry"));
    p = probe_abbrev_table_problem(table, table + 14, ABBREV_C, why, sizeof why);
    assert_non_null(p);
    assert_non_null(strstr(p, "is cut short"));
}

/* ---- layouts ---- */

static struct layout_member members[4];
static struct layout_type type;

/* struct s { int a; int b; } of 8 bytes, align 4: the whole type each case changes. */
static struct layout_type *two_ints(void)
{
    memset(members, 0, sizeof members);
    members[0] = (struct layout_member){
        .name = "a", .type = "int", .offset = 0, .size = 4, .bit_offset = -1};
    members[1] = (struct layout_member){
        .name = "b", .type = "int", .offset = 4, .size = 4, .bit_offset = -1};
    type = (struct layout_type){.name = "s",
                                .kind = "struct",
                                .size = 8,
                                .align = 4,
                                .members = members,
                                .member_count = 2};
    return &type;
}

static void expect_layout_refused(const struct layout_type *t, const char *words)
{
    char why[300] = "";
    if (probe_layout_type_problem(t, why, sizeof why) == NULL)
        fail_msg("accepted, wanted \"%s\"", words);
    if (strstr(why, words) == NULL)
        fail_msg("\"%s\" does not say \"%s\"", why, words);
}

static void expect_layout_accepted(const struct layout_type *t)
{
    char why[300];
    const char *problem = probe_layout_type_problem(t, why, sizeof why);
    if (problem != NULL)
        fail_msg("refused: %s", problem);
}

static void test_a_possible_layout_passes(void **state)
{
    (void)state;
    expect_layout_accepted(two_ints());
    struct layout_type *t = two_ints();
    t->kind = "union"; /* in a union, members share their bytes */
    t->size = 4;
    members[1].offset = 0;
    expect_layout_accepted(t);
    t = two_ints(); /* an empty base shares its address with the first member */
    members[2] = members[1];
    members[1] = (struct layout_member){
        .name = "E", .type = "E", .offset = 0, .size = 1, .bit_offset = -1, .is_base = true};
    t->member_count = 3;
    expect_layout_accepted(t);
}

static void test_overlapping_members(void **state)
{
    (void)state;
    struct layout_type *t = two_ints();
    members[1].offset = 2;
    expect_layout_refused(t, "overlap");
    t = two_ints(); /* reached only through the second: a third member inside the first */
    members[2] = (struct layout_member){
        .name = "c", .type = "char", .offset = 1, .size = 1, .bit_offset = -1};
    t->member_count = 3;
    expect_layout_refused(t, "members a and c of struct s overlap");
}

static void test_bit_fields_share_units_not_bits(void **state)
{
    (void)state;
    struct layout_type *t = two_ints();
    members[0] = (struct layout_member){.name = "x",
                                        .type = "unsigned int",
                                        .offset = 0,
                                        .size = 4,
                                        .bit_offset = 0,
                                        .bit_size = 3};
    members[1] = (struct layout_member){.name = "y",
                                        .type = "unsigned int",
                                        .offset = 0,
                                        .size = 4,
                                        .bit_offset = 3,
                                        .bit_size = 5};
    t->size = 4;
    expect_layout_accepted(t);
    members[1].bit_offset = 2;
    expect_layout_refused(t, "members x and y of struct s overlap");
    members[1].bit_offset = 30; /* bits 30..34 of a 4-byte type */
    expect_layout_refused(t, "lies past the end");
}

static void test_member_past_the_end(void **state)
{
    (void)state;
    struct layout_type *t = two_ints();
    members[1].offset = 8;
    expect_layout_refused(t, "member b (offset 8, size 4) lies past the end of struct s");
    t = two_ints();
    members[1].offset = 5; /* its last byte past the end */
    expect_layout_refused(t, "lies past the end");
}

/* rustc 1.63 (Debian 12's) gives an unsized tail such as std's `struct Slice { inner: [u8] }`
 * (0 bytes) as a bit-field of 0 bits in a 1-byte unit: it takes no bit, and is no corruption.
 * A byte past the end of such a type still is. */
static void test_zero_width_bit_field_in_an_empty_type(void **state)
{
    (void)state;
    struct layout_type *t = two_ints();
    members[0] = (struct layout_member){
        .name = "inner", .type = "u8", .offset = 0, .size = 1, .bit_offset = 0, .bit_size = 0};
    t->member_count = 1;
    t->size = 0;
    t->align = 1;
    expect_layout_accepted(t);
    members[0].bit_size = 1;
    expect_layout_refused(t, "member inner (offset 0, size 1) lies past the end");
}

static void test_impossible_size_or_alignment(void **state)
{
    (void)state;
    struct layout_type *t = two_ints();
    t->size = 13;
    expect_layout_refused(t, "yet no multiple of its alignment 4");
    t = two_ints();
    t->size = 11; /* tail padding under the alignment: #pragma pack can do that */
    expect_layout_accepted(t);
    t = two_ints();
    t->align = 3;
    expect_layout_refused(t, "no power of two");
    t->align = 0;
    expect_layout_refused(t, "no power of two");
}

static void test_names_that_are_no_text(void **state)
{
    (void)state;
    struct layout_type *t = two_ints();
    members[1].name = "b\x01";
    expect_layout_refused(t, "is not UTF-8 text");
    t = two_ints();
    members[1].type = "in\xfft";
    expect_layout_refused(t, "is not UTF-8 text");
    t = two_ints();
    t->name = "s\x7f";
    expect_layout_refused(t, "its name of struct (unprintable) is not UTF-8 text");
    t = two_ints();
    members[1].name = "caf\xc3\xa9"; /* UTF-8 is fine */
    expect_layout_accepted(t);
}

static void test_type_that_cannot_be_spelled(void **state)
{
    (void)state;
    struct layout_type *t = two_ints();
    members[1].type = "struct ?";
    expect_layout_refused(t, "the type of member b of struct s cannot be spelled");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_whole_table_passes),
        cmocka_unit_test(test_children_flag_neither_0_nor_1),
        cmocka_unit_test(test_children_on_a_childless_tag),
        cmocka_unit_test(test_unknown_tag),
        cmocka_unit_test(test_cplusplus_tag_in_a_c_unit),
        cmocka_unit_test(test_attribute_in_a_form_of_another_class),
        cmocka_unit_test(test_no_such_form_or_attribute),
        cmocka_unit_test(test_attribute_no_die_of_the_tag_has),
        cmocka_unit_test(test_sibling_without_children),
        cmocka_unit_test(test_go_units_habits),
        cmocka_unit_test(test_cut_or_unterminated_table),
        cmocka_unit_test(test_a_possible_layout_passes),
        cmocka_unit_test(test_overlapping_members),
        cmocka_unit_test(test_bit_fields_share_units_not_bits),
        cmocka_unit_test(test_member_past_the_end),
        cmocka_unit_test(test_zero_width_bit_field_in_an_empty_type),
        cmocka_unit_test(test_impossible_size_or_alignment),
        cmocka_unit_test(test_names_that_are_no_text),
        cmocka_unit_test(test_type_that_cannot_be_spelled),
    };
    return cmocka_run_group_tests_name("layout checks", tests, NULL, NULL);
}
