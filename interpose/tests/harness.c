/* The preload tests' shared harness: a fresh dump directory per test, fixtures started under
 * LD_PRELOAD, and dumps read back with jansson. */
#include <arpa/inet.h>
#include <dirent.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

char dump_dir[256];

const char *test_preload_path(void)
{
    const char *chosen = getenv("QAUDIT_TEST_PRELOAD");
    return chosen != NULL && chosen[0] != '\0' ? chosen : PRELOAD_PATH;
}

/* A failing test jumps past its remove_dir(): the next fresh_dir(), or the exit, removes its
 * directory. */
static void remove_left_dir(void)
{
    if (dump_dir[0] != '\0')
        remove_dir();
}

void fresh_dir(void)
{
    static bool at_exit;
    if (!at_exit)
        at_exit = atexit(remove_left_dir) == 0;
    remove_left_dir();
    snprintf(dump_dir, sizeof dump_dir, "/tmp/qaudit-test-XXXXXX");
    assert_non_null(mkdtemp(dump_dir));
}

void remove_dir(void)
{
    DIR *d = opendir(dump_dir);
    struct dirent *e;
    char path[600];
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dump_dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dump_dir);
    dump_dir[0] = '\0';
}

/* Starts argv under the preload with QAUDIT_OUT in the dump directory plus extra "K=V" settings;
 * returns its pid. */
pid_t start(const char *const *argv, const char *const *extra)
{
    pid_t pid = fork();
    if (pid == 0) {
        setenv("LD_PRELOAD", test_preload_path(), 1);
        char out[400];
        snprintf(out, sizeof out, "%s/dump-%%p.json", dump_dir);
        setenv("QAUDIT_OUT", out, 1);
        for (size_t i = 0; extra && extra[i]; i++)
            putenv((char *)extra[i]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

int wait_exit(pid_t pid)
{
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void wait_catching(pid_t pid, int signo)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    for (int tries = 0; tries < 6000; tries++) {
        FILE *f = fopen(path, "r");
        unsigned long long caught = 0;
        bool read = false;
        while (f && fgets(line, sizeof line, f))
            read |= sscanf(line, "SigCgt: %llx", &caught) == 1;
        if (f)
            fclose(f);
        if (!read || waitpid(pid, NULL, WNOHANG) != 0)
            fail_msg("process %d ended before it caught signal %d", (int)pid, signo);
        if (caught & (1ull << (signo - 1)))
            return;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    fail_msg("process %d does not catch signal %d after 60 s", (int)pid, signo);
}

json_t *load(const char *path)
{
    json_error_t error;
    json_t *root = json_load_file(path, 0, &error);
    if (root == NULL)
        fail_msg("%s: %s at line %d", path, error.text, error.line);
    assert_string_equal(json_string_value(json_object_get(root, "format")), "qaudit-alloc/1");
    return root;
}

json_t *run_preloaded(const char *const *argv, const char *const *extra)
{
    pid_t pid = start(argv, extra);
    assert_int_equal(wait_exit(pid), 0);
    return load_pid(pid);
}

json_t *load_pid(pid_t pid)
{
    char path[400];
    snprintf(path, sizeof path, "%s/dump-%d.json", dump_dir, (int)pid);
    return load(path);
}

/* The number at a dotted path such as "totals.allocs". */
long long num(json_t *root, const char *path)
{
    char copy[128];
    snprintf(copy, sizeof copy, "%s", path);
    json_t *node = root;
    for (char *save = NULL, *key = strtok_r(copy, ".", &save); key;
         key = strtok_r(NULL, ".", &save))
        node = json_object_get(node, key);
    if (!json_is_integer(node))
        fail_msg("%s is not an integer", path);
    return json_integer_value(node);
}

json_t *check_named(json_t *root, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(root, "checks"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
            return c;
    }
    fail_msg("no check %s", name);
    return NULL;
}

bool passed(json_t *root, const char *name)
{
    return json_is_true(json_object_get(check_named(root, name), "passed"));
}

long long sum_over_sites(json_t *root, const char *field)
{
    long long sum = 0;
    size_t i;
    json_t *site;
    json_array_foreach(json_object_get(root, "sites"), i, site)
    {
        sum += json_integer_value(json_object_get(site, field));
    }
    return sum;
}

/* The first site whose field holds value, or NULL. */
json_t *site_with(json_t *root, const char *field, long long value)
{
    size_t i;
    json_t *site;
    json_array_foreach(json_object_get(root, "sites"), i, site)
    {
        if (json_integer_value(json_object_get(site, field)) == value)
            return site;
    }
    return NULL;
}

int count_dumps(void)
{
    DIR *dir = opendir(dump_dir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dir)) != NULL)
        n += strncmp(e->d_name, "dump-", 5) == 0 && strstr(e->d_name, ".tmp") == NULL;
    closedir(dir);
    return n;
}

/* An LD_PRELOAD setting with jemalloc after qaudit, so that qaudit forwards to jemalloc. */
void preload_then_jemalloc(char *setting, size_t size)
{
    const char *jemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
    if (access(jemalloc, R_OK) != 0)
        fail_msg("%s is missing: scripts/deps.sh installs libjemalloc2", jemalloc);
    snprintf(setting, size, "LD_PRELOAD=%s %s", test_preload_path(), jemalloc);
}

/* Runs argv to its end with stdout captured into out (NUL-terminated, cut at size - 1), under
 * the preload (QAUDIT_OUT=<dump_dir>/<out_name>, extra "K=V" settings) or natively, in
 * directory dir (NULL: this one), without core files. Returns the exit status, or 128 + the
 * signal that ended it. */
int run_captured(const struct captured_run *run, char *out, size_t size)
{
    int pipe_fds[2];
    assert_int_equal(pipe(pipe_fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipe_fds[1], STDOUT_FILENO);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0});
        if (run->dir != NULL && chdir(run->dir) != 0)
            _exit(126);
        if (run->preload) {
            setenv("LD_PRELOAD", test_preload_path(), 1);
            char pattern[400];
            snprintf(pattern, sizeof pattern, "%s/%s", dump_dir,
                     run->out_name ? run->out_name : "dump-%p.json");
            setenv("QAUDIT_OUT", run->out_relative ? run->out_name : pattern, 1);
        }
        for (size_t i = 0; run->extra && run->extra[i]; i++)
            putenv((char *)run->extra[i]);
        execv(run->argv[0], (char *const *)run->argv);
        _exit(127);
    }
    close(pipe_fds[1]);
    size_t len = 0;
    ssize_t n;
    while ((n = read(pipe_fds[0], out + len, size - 1 - len)) > 0 && len + 1 < size)
        len += (size_t)n;
    out[len] = '\0';
    close(pipe_fds[0]);
    return wait_exit(pid);
}

/* The finished dumps in dir, loaded, in *count (caller frees each and the array). */
json_t **load_dumps_in(const char *dir_path, size_t *count)
{
    DIR *dir = opendir(dir_path);
    assert_non_null(dir);
    json_t **dumps = NULL;
    *count = 0;
    struct dirent *e;
    char path[1200];
    while ((e = readdir(dir)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0 || strstr(e->d_name, ".tmp."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        dumps = realloc(dumps, (*count + 1) * sizeof *dumps);
        assert_non_null(dumps);
        dumps[(*count)++] = load(path);
    }
    closedir(dir);
    return dumps;
}

json_t **load_all_dumps(size_t *count)
{
    return load_dumps_in(dump_dir, count);
}

void free_dumps(json_t **dumps, size_t count)
{
    for (size_t i = 0; i < count; i++)
        json_decref(dumps[i]);
    free(dumps);
}

const char *str_at(json_t *root, const char *object, const char *key)
{
    return json_string_value(json_object_get(json_object_get(root, object), key));
}

/* A TCP port on 127.0.0.1 from the kernel, held for the server a test starts: the socket that
 * got it stays bound (not listening, SO_REUSEADDR, closed on exec) until this process exits, so
 * that no other bind to port 0 (another test under ctest -j) is given it, while the server, which
 * binds with SO_REUSEADDR as redis-server, nginx, memcached and node do, takes it. */
int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    assert_int_equal(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on), 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    return ntohs(a.sin_port); /* s stays open: the hold */
}

/* One PING on 127.0.0.1:port answered +PONG. */
bool redis_ping(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    char reply[16] = {0};
    bool pong = connect(s, (struct sockaddr *)&a, sizeof a) == 0 && write(s, "PING\r\n", 6) == 6 &&
                read(s, reply, sizeof reply - 1) > 0 && strcmp(reply, "+PONG\r\n") == 0;
    close(s);
    return pong;
}
