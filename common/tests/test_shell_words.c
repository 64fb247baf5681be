/* common/shell_words: plain words as they are, others single-quoted, quotes inside escaped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/shell_words.h"

static void plain_words_stay_and_others_are_quoted(void **state)
{
    (void)state;
    char *line = NULL;
    size_t len = 0;
    assert_true(shell_word_append(&line, &len, "qaudit"));
    assert_string_equal(line, "qaudit"); /* the first word: no space before it */
    assert_true(shell_word_append(&line, &len, "a/b_c.d:e=f@g%h+i-9"));
    assert_true(shell_word_append(&line, &len, "two words"));
    assert_true(shell_word_append(&line, &len, "it's"));
    assert_true(shell_word_append(&line, &len, ""));
    assert_true(shell_word_append(&line, &len, "$HOME*"));
    assert_string_equal(line, "qaudit a/b_c.d:e=f@g%h+i-9 'two words' 'it'\\''s' '' '$HOME*'");
    assert_int_equal(len, strlen(line));
    free(line);
}

static void a_word_of_quotes_only_fits_its_worst_case(void **state)
{
    (void)state;
    char *line = NULL;
    size_t len = 0;
    assert_true(shell_word_append(&line, &len, "''''"));
    assert_string_equal(line, "''\\'''\\'''\\'''\\'''");
    assert_int_equal(len, 4 * 4 + 2);
    free(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_words_stay_and_others_are_quoted),
        cmocka_unit_test(a_word_of_quotes_only_fits_its_worst_case),
    };
    return cmocka_run_group_tests_name("shell_words", tests, NULL, NULL);
}
