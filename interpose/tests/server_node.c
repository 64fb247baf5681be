/* test_servers node: Debian's nodejs running a small HTTP server (no signal handler of its own:
 * node's SIGTERM handler, installed with SA_RESETHAND, resets the terminal and raises the signal
 * again), under a bounded load of curl, stopped by SIGTERM. Natively and under `qaudit run`:
 * the same bodies, output and exit status (143), and a final dump that names SIGTERM. */
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "foreign_common.h"
#include "foreign_run.h"
#include "harness.h"
#include "servers.h"

#define NODE "/usr/bin/node"

/* Replies depend on the request only: a body per path, 404 for /missing. */
static const char server_js[] =
    "const http = require('http');\n"
    "const port = Number(process.argv[1]);\n"
    "http.createServer((req, res) => {\n"
    "  if (req.url === '/missing') { res.statusCode = 404; res.end('no\\n'); return; }\n"
    "  const n = req.url.length * 100;\n"
    "  res.end('node ' + req.url + ' ' + 'x'.repeat(n) + '\\n');\n"
    "}).listen(port, '127.0.0.1', () => console.log('listening'));\n";

static const char *const paths[] = {"/", "/a", "/bb", "/missing", "/some/longer/path?q=1", NULL};

struct node_run {
    struct server_run run;
    pid_t started, server;
    int status;
};

static struct node_run native, preloaded;

static void node_run(struct node_run *n, bool qaudit)
{
    struct server_run *r = &n->run;
    server_run_init(r, qaudit, NULL);
    int port = free_port();
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    const char *argv[] = {NODE, "-e", server_js, port_text, NULL};
    n->started = start_command(r, "node", argv);
    n->server = program_of(r, n->started, NODE);
    wait_listening(port);
    http_bodies(r, "bodies", port, paths);
    http_load(r, "node", port, paths, 300);
    kill(n->server, SIGTERM);
    n->status = wait_exit_of(n->started);
    assert_nothing_left();
}

static int node_setup(void **state)
{
    require(NODE, "nodejs");
    require("/usr/bin/curl", "curl");
    server_setup(state);
    node_run(&native, false);
    node_run(&preloaded, true);
    return 0;
}

static void test_node_replies_and_status_as_native(void **state)
{
    (void)state;
    assert_int_equal(native.status, 128 + SIGTERM);
    assert_int_equal(preloaded.status, native.status);
    assert_same_log(&native.run, &preloaded.run, "bodies.out", false, false);
    assert_same_log(&native.run, &preloaded.run, "node-load.out", false, true);
}

static void test_node_output_as_native(void **state)
{
    (void)state;
    assert_same_log(&native.run, &preloaded.run, "node.out", false, false);
    assert_same_log(&native.run, &preloaded.run, "node.err", false, false);
}

/* Point 2 of the issue: a handler with SA_RESETHAND that raises again leaves the final dump,
 * with the signal named. */
static void test_node_final_dump_names_sigterm(void **state)
{
    (void)state;
    json_t *d = final_dump_of(&preloaded.run, preloaded.server);
    assert_string_equal(text_of(d, "reason"), "fatal_signal");
    assert_string_equal(text_of(json_object_get(d, "process"), "end_signal"), "SIGTERM");
    json_decref(d);
}

static void test_node_dump_sound(void **state)
{
    (void)state;
    assert_no_negative_figure(&preloaded.run);
    assert_unwinds_agree(preloaded.run.out);
    assert_each_dump_reported(&preloaded.run);
    assert_merged_once(&preloaded.run);
    static const char *const watched[] = {"/", "/usr/bin", NULL};
    assert_no_stray_dump(&preloaded.run, watched);
}

int servers_node(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_replies_and_status_as_native),
        cmocka_unit_test(test_node_output_as_native),
        cmocka_unit_test(test_node_final_dump_names_sigterm),
        cmocka_unit_test(test_node_dump_sound),
    };
    return cmocka_run_group_tests_name("node", tests, node_setup, server_teardown);
}
