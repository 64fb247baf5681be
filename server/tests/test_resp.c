/* RESP scanner and extractor: commands split across segments at every byte position, one byte per
 * segment, pipelines, inline commands, and every protocol error with its message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resp.h"
#include "resp_feed.h"

enum { MAX_COMMANDS = 16 };

struct outcome {
    size_t commands;
    char text[MAX_COMMANDS][256]; /* arguments joined by '|' */
    const char *error;
};

/* Records a command as text: bytes outside printable ASCII as \xHH, arguments cut at 40. */
static void record(void *ctx, const struct resp_args *args)
{
    struct outcome *out = ctx;
    assert_true(out->commands < MAX_COMMANDS);
    char *text = out->text[out->commands++];
    size_t used = 0;
    for (size_t i = 0; i < args->argc; i++) {
        if (i)
            text[used++] = '|';
        for (size_t k = 0; k < args->argv[i].len && k < 40; k++) {
            unsigned char ch = (unsigned char)args->argv[i].ptr[k];
            if (ch >= ' ' && ch <= '~' && ch != '\\')
                text[used++] = (char)ch;
            else
                used += (size_t)snprintf(text + used, 5, "\\x%02x", ch);
        }
    }
    text[used] = '\0';
}

static struct outcome parse_split(const char *input, size_t len, const size_t *cuts, size_t ncuts)
{
    struct outcome out = {0};
    out.error = resp_feed(input, len, cuts, ncuts, record, &out);
    return out;
}

static struct outcome parse_whole(const char *input, size_t len)
{
    return parse_split(input, len, NULL, 0);
}

static void expect_commands(struct outcome out, const char *const *expected, size_t n)
{
    assert_null(out.error);
    assert_int_equal(out.commands, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(out.text[i], expected[i]);
}

/* The input parses to the same commands whole, cut once at every position, and cut into
 * single bytes. */
static void expect_at_every_split(const char *input, size_t len, const char *const *expected,
                                  size_t n)
{
    expect_commands(parse_whole(input, len), expected, n);
    for (size_t cut = 1; cut < len; cut++)
        expect_commands(parse_split(input, len, &cut, 1), expected, n);
    for (size_t a = 1; a + 1 < len && len < 200; a += 3)
        for (size_t b = a + 1; b < len; b += 2)
            expect_commands(parse_split(input, len, (size_t[]){a, b}, 2), expected, n);
    size_t *bytes = malloc(len * sizeof *bytes);
    for (size_t i = 0; i + 1 < len; i++)
        bytes[i] = i + 1;
    expect_commands(parse_split(input, len, bytes, len - 1), expected, n);
    free(bytes);
}

#define EXPECT_ALL(input, ...)                                                                     \
    do {                                                                                           \
        static const char *const expected[] = {__VA_ARGS__};                                       \
        expect_at_every_split(input, sizeof(input) - 1, expected,                                  \
                              sizeof expected / sizeof expected[0]);                               \
    } while (0)

static void test_multibulk_split_everywhere(void **state)
{
    (void)state;
    EXPECT_ALL("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nhello\r\n", "SET|key|hello");
    EXPECT_ALL("*1\r\n$4\r\nPING\r\n", "PING");
    EXPECT_ALL("*2\r\n$3\r\nGET\r\n$0\r\n\r\n", "GET|");
}

static void test_binary_bulk_with_crlf_inside(void **state)
{
    (void)state;
    static const char input[] = "*3\r\n$3\r\nSET\r\n$2\r\n\0k\r\n$6\r\na\r\n\r\nb\r\n";
    static const char *const expected[] = {"SET|\\x00k|a\\x0d\\x0a\\x0d\\x0ab"};
    expect_at_every_split(input, sizeof input - 1, expected, 1);
}

static void test_pipeline_split_everywhere(void **state)
{
    (void)state;
    EXPECT_ALL("*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$"
               "2\r\nhi\r\n",
               "PING", "GET|k", "PING", "ECHO|hi");
}

static void test_inline_commands(void **state)
{
    (void)state;
    EXPECT_ALL("SET  k   v\r\nGET k\n\r\n\r\nPING\r\n", "SET|k|v", "GET|k", "PING");
    EXPECT_ALL("*0\r\n*-1\r\nPING\r\n", "PING");
}

static void expect_error(const char *input, size_t len, const char *message)
{
    struct outcome out = parse_whole(input, len);
    assert_non_null(out.error);
    assert_string_equal(out.error, message);
    for (size_t cut = 1; cut < len && len < 100; cut++) {
        out = parse_split(input, len, &cut, 1);
        assert_non_null(out.error);
        assert_string_equal(out.error, message);
    }
}

#define EXPECT_ERROR(input, message) expect_error(input, sizeof(input) - 1, message)

static void test_protocol_errors(void **state)
{
    (void)state;
    EXPECT_ERROR("*x\r\n", "Protocol error: invalid multibulk length");
    EXPECT_ERROR("*\r\n", "Protocol error: invalid multibulk length");
    EXPECT_ERROR("*1048577\r\n", "Protocol error: invalid multibulk length");
    EXPECT_ERROR("*99999999999999\r\n", "Protocol error: invalid multibulk length");
    EXPECT_ERROR("*2\rX", "Protocol error: invalid multibulk length");
    EXPECT_ERROR("*1\r\n+PING\r\n", "Protocol error: expected '$'");
    EXPECT_ERROR("*1\r\n$-1\r\n", "Protocol error: invalid bulk length");
    EXPECT_ERROR("*1\r\n$536870913\r\n", "Protocol error: invalid bulk length");
    EXPECT_ERROR("*1\r\n$4x\r\n", "Protocol error: invalid bulk length");
    EXPECT_ERROR("*1\r\n$4\r\nPINGXX", "Protocol error: expected CRLF after bulk");
    EXPECT_ERROR("*1\r\n$4\r\nPING\rX", "Protocol error: expected CRLF after bulk");
}

/* Junk without a newline is an inline request that grows past the limit. */
static void test_unterminated_inline_is_bounded(void **state)
{
    (void)state;
    size_t len = RESP_MAX_INLINE + 10;
    char *junk = malloc(len);
    for (size_t i = 0; i < len; i++)
        junk[i] = (char)(1 + i % 9); /* no \n, no \r */
    size_t cuts[40];
    for (size_t i = 0; i < 40; i++)
        cuts[i] = (i + 1) * 4096;
    struct outcome out = parse_split(junk, len, cuts, 16);
    assert_non_null(out.error);
    assert_string_equal(out.error, "Protocol error: too big inline request");
    free(junk);
}

/* A maximal argument count is accepted by the scanner; one more is not. */
static void test_argument_count_limit(void **state)
{
    (void)state;
    static const char at_limit[] = "*1048576\r\n$4\r\nPING\r\n";
    struct outcome out = parse_whole(at_limit, sizeof at_limit - 1);
    assert_null(out.error);
    assert_int_equal(out.commands, 0); /* incomplete: more bulks expected */
    out = parse_whole("*1048577\r\n", 10);
    assert_string_equal(out.error, "Protocol error: invalid multibulk length");
}

/* A bulk of RESP_SPILL_BULK bytes asks for a spill buffer; the command then completes there. */
static void test_large_bulk_spills(void **state)
{
    (void)state;
    size_t value = RESP_SPILL_BULK + 123;
    char header[64];
    int h = snprintf(header, sizeof header, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%zu\r\n", value);
    size_t len = (size_t)h + value + 2 + 14;
    char *input = malloc(len);
    memcpy(input, header, (size_t)h);
    memset(input + h, 'v', value);
    memcpy(input + h + value, "\r\n*1\r\n$4\r\nPING\r\n", 16);
    len = (size_t)h + value + 16;
    size_t cuts[80], n = 0;
    for (size_t at = 4096; at < len && n < 80; at += 4096)
        cuts[n++] = at;
    struct outcome out = parse_split(input, len, cuts, n);
    assert_null(out.error);
    assert_int_equal(out.commands, 2);
    assert_memory_equal(out.text[0], "SET|k|vvvv", 10);
    assert_int_equal(strlen(out.text[0]), 6 + 40);
    assert_string_equal(out.text[1], "PING");
    free(input);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multibulk_split_everywhere),
        cmocka_unit_test(test_binary_bulk_with_crlf_inside),
        cmocka_unit_test(test_pipeline_split_everywhere),
        cmocka_unit_test(test_inline_commands),
        cmocka_unit_test(test_protocol_errors),
        cmocka_unit_test(test_unterminated_inline_is_bounded),
        cmocka_unit_test(test_argument_count_limit),
        cmocka_unit_test(test_large_bulk_spills),
    };
    return cmocka_run_group_tests_name("resp", tests, NULL, NULL);
}
