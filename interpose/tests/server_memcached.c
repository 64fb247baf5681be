/* test_servers memcached: Debian's memcached started as root with -u memcache (it drops to that
 * user), -vv (its log on stderr), under a bounded load from a small client here: four
 * connections, 300 sets and gets of values of 1 to 3,000 bytes, deletes and increments, one
 * request at a time; then SIGTERM. Natively and under `qaudit run`: the same replies, values
 * and log; its dump sound (servers.h) and where the run's dumps go, not lost to the drop. */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "foreign_common.h"
#include "foreign_run.h"
#include "harness.h"
#include "servers.h"

#define MEMCACHED "/usr/bin/memcached"
#define CONNECTIONS 4
#define KEYS 300
#define REPLY_MAX 8192

struct memcached_run {
    struct server_run run;
    pid_t started, server;
    int status;
};

static struct memcached_run native, preloaded;

/* A connection to 127.0.0.1:port that gives up on a reply after 30 s. */
static int connect_to(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval limit = {.tv_sec = 30};
    assert_int_equal(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit), 0);
    assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    return s;
}

static bool ends_with(const char *text, size_t len, const char *end)
{
    size_t n = strlen(end);
    return len >= n && memcmp(text + len - n, end, n) == 0;
}

/* Sends request, reads the whole reply (up to "END\r\n" for a get, a line otherwise) into reply,
 * and appends both to the transcript. */
static void exchange(int s, const char *request, size_t len, char *reply, FILE *transcript)
{
    assert_int_equal(write(s, request, len), (ssize_t)len);
    bool get = strncmp(request, "get ", 4) == 0;
    size_t got = 0;
    while (got == 0 || !ends_with(reply, got, get ? "END\r\n" : "\r\n")) {
        ssize_t n = read(s, reply + got, REPLY_MAX - 1 - got);
        if (n <= 0)
            fail_msg("memcached: no whole reply to %.40s (%zu bytes so far)", request, got);
        got += (size_t)n;
    }
    reply[got] = '\0';
    fwrite(reply, 1, got, transcript);
}

static size_t value_length(int i)
{
    return (size_t)(i * 37) % 3000 + 1;
}

static void fill_value(char *value, int i)
{
    for (size_t k = 0; k < value_length(i); k++)
        value[k] = (char)('A' + (k + (size_t)i) % 26);
}

/* The load: sets, gets checked against what was set, a miss, deletes, increments. */
static void run_load(const struct server_run *r, int port)
{
    char path[400], request[4096], reply[REPLY_MAX], value[3001], expected[4096];
    snprintf(path, sizeof path, "%s/replies.out", r->dir);
    FILE *transcript = fopen(path, "w");
    assert_non_null(transcript);
    int c[CONNECTIONS];
    for (int i = 0; i < CONNECTIONS; i++)
        c[i] = connect_to(port);
    for (int i = 0; i < KEYS; i++) {
        fill_value(value, i);
        int n = snprintf(request, sizeof request, "set key:%d %d 0 %zu\r\n%.*s\r\n", i, i % 7,
                         value_length(i), (int)value_length(i), value);
        exchange(c[i % CONNECTIONS], request, (size_t)n, reply, transcript);
        assert_string_equal(reply, "STORED\r\n");
    }
    for (int i = 0; i < KEYS; i++) {
        int n = snprintf(request, sizeof request, "get key:%d\r\n", i);
        exchange(c[(i + 1) % CONNECTIONS], request, (size_t)n, reply, transcript);
        fill_value(value, i);
        snprintf(expected, sizeof expected, "VALUE key:%d %d %zu\r\n%.*s\r\nEND\r\n", i, i % 7,
                 value_length(i), (int)value_length(i), value);
        assert_string_equal(reply, expected);
    }
    static const char *const rest[] = {
        "get no-such-key\r\n", "delete key:1\r\n",     "delete key:1\r\n",
        "get key:1\r\n",       "set n 0 0 1\r\n7\r\n", "incr n 5\r\n",
        "incr n 30\r\n",       "decr n 2\r\n",         "get n\r\n"};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        exchange(c[i % CONNECTIONS], rest[i], strlen(rest[i]), reply, transcript);
    for (int i = 0; i < CONNECTIONS; i++)
        close(c[i]);
    fclose(transcript);
}

static void memcached_run(struct memcached_run *m, bool qaudit)
{
    struct server_run *r = &m->run;
    server_run_init(r, qaudit, NULL);
    int port = free_port();
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    const char *argv[] = {MEMCACHED, "-u", "memcache", "-l", "127.0.0.1", "-p",  port_text, "-U",
                          "0",       "-t", "4",        "-c", "64",        "-vv", NULL};
    m->started = start_command(r, "memcached", argv);
    m->server = program_of(r, m->started, MEMCACHED);
    wait_listening(port);
    run_load(r, port);
    kill(m->server, SIGTERM);
    m->status = wait_exit_of(m->started);
    assert_nothing_left();
}

static int memcached_setup(void **state)
{
    require(MEMCACHED, "memcached");
    server_setup(state);
    memcached_run(&native, false);
    memcached_run(&preloaded, true);
    return 0;
}

static void test_memcached_replies_as_native(void **state)
{
    (void)state;
    if (preloaded.status != native.status)
        fail_msg("memcached: exit %d natively, %d under qaudit run", native.status,
                 preloaded.status);
    assert_same_log(&native.run, &preloaded.run, "replies.out", false, false);
}

/* Its -vv log: what each connection asked and got, by descriptor number, which must be the
 * same; the worker threads' lines interleave as they will, so the lines are compared sorted. */
static void test_memcached_log_as_native(void **state)
{
    (void)state;
    assert_same_log(&native.run, &preloaded.run, "memcached.err", false, true);
    assert_same_log(&native.run, &preloaded.run, "memcached.out", false, false);
}

static void test_memcached_no_negative_figure(void **state)
{
    (void)state;
    assert_no_negative_figure(&preloaded.run);
    assert_unwinds_agree(preloaded.run.out);
}

static void test_memcached_dump_reported_alone_and_merged(void **state)
{
    (void)state;
    assert_each_dump_reported(&preloaded.run);
    assert_merged_once(&preloaded.run);
}

/* memcached changed its user to memcache after start: its final dump is still the run's, in
 * the run's directory (its qaudit run outlives it and collects what the fallback holds). */
static void test_memcached_final_dump_after_the_privilege_drop(void **state)
{
    (void)state;
    char path[700];
    snprintf(path, sizeof path, "%s/d-%d.json", preloaded.run.out, (int)preloaded.server);
    if (access(path, F_OK) != 0)
        fail_msg("memcached's dump is not where the run's dumps go: no %s", path);
    assert_final_dumps(&preloaded.run, &preloaded.server, 1, 1);
}

static void test_memcached_no_dump_outside_the_run(void **state)
{
    (void)state;
    static const char *const watched[] = {"/", "/usr/bin", "/nonexistent", NULL};
    assert_no_stray_dump(&preloaded.run, watched);
}

int servers_memcached(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memcached_replies_as_native),
        cmocka_unit_test(test_memcached_log_as_native),
        cmocka_unit_test(test_memcached_no_negative_figure),
        cmocka_unit_test(test_memcached_dump_reported_alone_and_merged),
        cmocka_unit_test(test_memcached_final_dump_after_the_privilege_drop),
        cmocka_unit_test(test_memcached_no_dump_outside_the_run),
    };
    return cmocka_run_group_tests_name("memcached", tests, memcached_setup, server_teardown);
}
