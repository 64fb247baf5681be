/* test_foreign programs: Debian's bash, python3, perl, git, gcc, wget and redis-server under the
 * preload print and exit exactly as natively (the interposer's own "qaudit: " lines aside), and
 * their dumps agree process by process with valgrind's totals or the program's own counters. */
#include <arpa/inet.h>
#include <dirent.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "foreign_common.h"
#include "foreign_run.h"
#include "harness.h"

/* A command run natively, under the preload and under valgrind, each in its own directory
 * (work/run-n, run-q, run-v: names of one length, so that no path changes a size). */
struct program {
    const char *const *argv;
    const char *const *extra; /* the program's own settings (hash seeds) */
    int status;               /* its exit status, natively */
    size_t processes;         /* how many processes it runs */
    const char *product;      /* a file it writes in its directory, compared, or NULL */
};

static int run_kind(const struct program *p, char kind, char *dir, size_t size)
{
    char name[8] = "run-?", out[600], err[600], pattern[700], log[700];
    name[4] = kind;
    in_work(dir, size, name);
    remove_tree(dir); /* a previous command's */
    mkdir(dir, 0700);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(err, sizeof err, "%s/err", dir);
    snprintf(pattern, sizeof pattern, "%s/d-%%p.json", dir);
    snprintf(log, sizeof log, "--log-file=%s/vg.%%p", dir);
    struct env e;
    const char *argv[40];
    size_t n = 0;
    if (kind == 'v') {
        const char *valgrind[] = {valgrind_path(), "--trace-children=yes", "--run-libc-freeres=no",
                                  "--run-cxx-freeres=no", log};
        for (size_t i = 0; i < sizeof valgrind / sizeof valgrind[0]; i++)
            argv[n++] = valgrind[i];
    }
    for (size_t i = 0; p->argv[i] && n < 39; i++)
        argv[n++] = p->argv[i];
    argv[n] = NULL;
    struct foreign_run run = {.argv = argv,
                              .env = base_env(&e, pattern, kind == 'q'),
                              .extra = p->extra,
                              .dir = dir,
                              .out = out,
                              .err = err};
    return foreign_run(&run);
}

static void print_totals(char *buf, size_t size, const struct process_totals *t, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, " %s %lld/%lld", t[i].name, t[i].allocs,
                                t[i].frees);
}

/* cc1's garbage collector allocates a table of 4,096 pointers (32 KiB, calloc'd, never freed)
 * for each 16 MiB of addresses its pages fall in (gcc's ggc-page.cc, PAGE_L2_SIZE), so how many
 * depends on where the kernel maps them, which a preload's own mappings and valgrind's layout
 * move: under ASLR the same compile made 1,545 or 1,546 callocs. The counts may differ by whole
 * tables only: k allocations, exactly k * 32 KiB, no free. */
static bool same_but_gc_tables(const struct process_totals *q, const struct process_totals *v)
{
    long long k = q->allocs - v->allocs;
    return strcmp(q->name, "cc1") == 0 && k != 0 && k >= -2 && k <= 2 && q->frees == v->frees &&
           q->bytes - v->bytes == k * 32768;
}

/* Per process, the exit dump's allocs + reallocs and frees + reallocs equal valgrind's "total
 * heap usage: N allocs, M frees" (valgrind counts a realloc as one of each); cc1's but for its
 * collector's tables (above). */
static void assert_totals_agree(const char *qaudit_dir, const char *valgrind_dir, size_t processes)
{
    struct process_totals q[16], v[16];
    size_t nq = dump_totals(qaudit_dir, q, 16), nv = valgrind_totals(valgrind_dir, v, 16);
    char qs[1024], vs[1024];
    print_totals(qs, sizeof qs, q, nq);
    print_totals(vs, sizeof vs, v, nv);
    bool same = nq == processes && nv == processes;
    for (size_t i = 0; same && i < nq; i++)
        same = strcmp(q[i].name, v[i].name) == 0 &&
               ((q[i].allocs == v[i].allocs && q[i].frees == v[i].frees) ||
                same_but_gc_tables(&q[i], &v[i]));
    if (!same)
        fail_msg("per process allocs/frees, %zu processes expected:\n  qaudit: %s\n  valgrind:%s",
                 processes, qs, vs);
}

static void check_program(const struct program *p)
{
    char native[600], preload[600], valgrind[600];
    int native_status = run_kind(p, 'n', native, sizeof native);
    int preload_status = run_kind(p, 'q', preload, sizeof preload);
    int valgrind_status = run_kind(p, 'v', valgrind, sizeof valgrind);
    assert_int_equal(native_status, p->status);
    assert_int_equal(preload_status, p->status);
    assert_int_equal(valgrind_status, p->status);
    free(assert_same_output(native, preload, "out", "err"));
    if (p->product)
        assert_same_file(native, preload, p->product);
    assert_totals_agree(preload, valgrind, p->processes);
    assert_unwinds_agree(preload);
}

/* Two processes: bash and the seq of its command substitution (fork + exec). */
static void test_bash(void **state)
{
    (void)state;
    const char *argv[] = {"/usr/bin/bash", "-c",
                          "for i in $(seq 200); do x=$x$i; done; echo ${#x}; echo to stderr >&2; "
                          "exit 3",
                          NULL};
    check_program(&(struct program){.argv = argv, .status = 3, .processes = 2});
}

static void test_python3(void **state)
{
    (void)state;
    const char *argv[] = {"/usr/bin/python3", "-c",
                          "import json, sys\n"
                          "d = {str(i): list(range(i)) for i in range(300)}\n"
                          "s = json.dumps(d, sort_keys=True)\n"
                          "print(len(s), sum(map(len, d.values())))\n"
                          "print('to stderr', file=sys.stderr)\n"
                          "sys.exit(4)\n",
                          NULL};
    const char *extra[] = {"PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1", NULL};
    check_program(&(struct program){.argv = argv, .extra = extra, .status = 4, .processes = 1});
}

static void test_perl(void **state)
{
    (void)state;
    const char *argv[] = {"/usr/bin/perl", "-e",
                          "my %h; $h{$_} = 'x' x $_ for 1..500; "
                          "my $s = join ',', map { length $h{$_} } sort { $a <=> $b } keys %h; "
                          "print length($s), qq(\\n); warn qq(to stderr\\n); exit 5",
                          NULL};
    const char *extra[] = {"PERL_HASH_SEED=0", "PERL_PERTURB_KEYS=0", NULL};
    check_program(&(struct program){.argv = argv, .extra = extra, .status = 5, .processes = 1});
}

/* A small repository made natively (fixed names and dates), read by git log -p and by a git
 * show that fails. */
static void make_repository(void)
{
    char repo[600], file[700];
    in_work(repo, sizeof repo, "repo");
    static const char *const git_env[] = {"GIT_AUTHOR_NAME=t",
                                          "GIT_AUTHOR_EMAIL=t@example.org",
                                          "GIT_COMMITTER_NAME=t",
                                          "GIT_COMMITTER_EMAIL=t@example.org",
                                          "GIT_AUTHOR_DATE=2020-01-01T00:00:00Z",
                                          "GIT_COMMITTER_DATE=2020-01-01T00:00:00Z",
                                          NULL};
    struct env e;
    const char *init[] = {"/usr/bin/git", "init", "-q", "-b", "main", ".", NULL};
    struct foreign_run run = {
        .argv = init, .env = base_env(&e, "/dev/null", false), .extra = git_env, .dir = repo};
    assert_int_equal(foreign_run(&run), 0);
    for (int i = 1; i <= 3; i++) {
        snprintf(file, sizeof file, "%s/f%d.txt", repo, i);
        spill(file, i == 2 ? "two\nlines\n" : "one line\n");
        const char *add[] = {"/usr/bin/git", "add", ".", NULL};
        const char *commit[] = {"/usr/bin/git", "commit", "-q", "-m", "a commit", NULL};
        run.argv = add;
        assert_int_equal(foreign_run(&run), 0);
        run.argv = commit;
        assert_int_equal(foreign_run(&run), 0);
    }
}

static void test_git(void **state)
{
    (void)state;
    make_repository();
    const char *extra[] = {"GIT_CONFIG_NOSYSTEM=1", NULL};
    const char *log[] = {"/usr/bin/git", "-C", "../repo", "log", "--stat", "-p", NULL};
    check_program(&(struct program){.argv = log, .extra = extra, .status = 0, .processes = 1});
    const char *show[] = {"/usr/bin/git", "-C", "../repo", "show", "no-such-revision", NULL};
    check_program(&(struct program){.argv = show, .extra = extra, .status = 128, .processes = 1});
}

/* gcc runs cc1 and as (vfork + exec): three processes, compared one by one; the object files
 * must be the same bytes. A compile error: gcc and cc1, the same diagnostics. */
static void test_gcc(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/x.c", work);
    spill(path, "static int square(int x) { return x * x; }\n"
                "int main(void) { return square(3) - 9; }\n");
    snprintf(path, sizeof path, "%s/bad.c", work);
    spill(path, "int f(void) { return undeclared; }\n");
    const char *compile[] = {"/usr/bin/gcc", "-c", "-O2", "-frandom-seed=qaudit",
                             "../x.c",       "-o", "x.o", NULL};
    check_program(
        &(struct program){.argv = compile, .status = 0, .processes = 3, .product = "x.o"});
    const char *error[] = {"/usr/bin/gcc", "-c", "../bad.c", "-o", "bad.o", NULL};
    check_program(&(struct program){.argv = error, .status = 1, .processes = 2});
}

/* wget links GnuTLS, whose destructor (as p11-kit's) frees what it set up after the preload's own
 * destructor has run: the exit dump counts those frees too (694 were missing when it was written
 * in that destructor). --version touches no network. */
static void test_wget(void **state)
{
    (void)state;
    const char *argv[] = {"/usr/bin/wget", "--version", NULL};
    check_program(&(struct program){.argv = argv, .status = 0, .processes = 1});
}

/* ---------------------------------------------------------------- redis-server */

static bool accepts(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bool ok = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
    close(s);
    return ok;
}

struct redis {
    char dir[600], port[16], log[700];
    struct foreign_run server;
    const char *argv[24];
    struct env env;
    int dumps; /* snapshots taken */
};

/* A redis-server client (redis-cli or redis-benchmark) against it, natively; its stdout. */
static char *client(struct redis *r, const char *program, const char *const *args)
{
    const char *argv[24] = {program, "-h", "127.0.0.1", "-p", r->port};
    size_t n = 5;
    for (size_t i = 0; args[i] && n < 23; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    char out[700];
    snprintf(out, sizeof out, "%s/client.out", r->dir);
    struct env e;
    struct foreign_run run = {.argv = argv, .env = base_env(&e, "/dev/null", false), .out = out};
    int status = foreign_run(&run);
    if (status != 0)
        fail_msg("%s %s: exit %d", program, args[0], status);
    return slurp(out, NULL);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* INFO commandstats reduced to what is deterministic: "cmdstat_X calls=N" lines, sorted (the
 * order is the command table's hash order, seeded at random). */
static char *command_calls(struct redis *r, long long *sets)
{
    const char *info[] = {"INFO", "commandstats", NULL};
    char *text = client(r, "/usr/bin/redis-cli", info);
    char *lines[256];
    size_t count = 0, size = 1;
    *sets = 0;
    for (char *at = strstr(text, "cmdstat_"); at && count < 256; at = strstr(at + 1, "cmdstat_")) {
        char name[64];
        long long calls;
        if (sscanf(at, "%63[^:]:calls=%lld", name, &calls) != 2)
            continue;
        if (asprintf(&lines[count], "%s calls=%lld\n", name, calls) < 0)
            fail_msg("out of memory");
        size += strlen(lines[count++]);
        if (strcmp(name, "cmdstat_set") == 0)
            *sets = calls;
    }
    qsort(lines, count, sizeof lines[0], by_text);
    char *all = calloc(size, 1);
    for (size_t i = 0; i < count; i++) {
        strcat(all, lines[i]);
        free(lines[i]);
    }
    free(text);
    return all;
}

static void start_redis(struct redis *r, bool preload)
{
    in_work(r->dir, sizeof r->dir, preload ? "redis-q" : "redis-n");
    snprintf(r->port, sizeof r->port, "%d", free_port());
    const char *argv[] = {
        "/usr/bin/redis-server", "--port", r->port, "--bind", "127.0.0.1",  "--save",  "",
        "--appendonly",          "no",     "--dir", r->dir,   "--loglevel", "warning", NULL};
    memcpy(r->argv, argv, sizeof argv);
    char pattern[700];
    snprintf(pattern, sizeof pattern, "%s/d-%%p-%%n.json", r->dir);
    snprintf(r->log, sizeof r->log, "%s/server.out", r->dir);
    r->server = (struct foreign_run){
        .argv = r->argv, .env = base_env(&r->env, pattern, preload), .out = r->log, .limit_s = 120};
    foreign_start(&r->server);
    for (int i = 0; i < 3000 && !accepts(atoi(r->port)); i++) /* 60 s at most */
        nanosleep(&(struct timespec){0, 20000000}, NULL);
    assert_true(accepts(atoi(r->port)));
}

/* The dump the server writes on the dump signal, once it is there (at most 30 s). */
static json_t *snapshot(struct redis *r)
{
    char path[700];
    snprintf(path, sizeof path, "%s/d-%d-%d.json", r->dir, (int)r->server.pid, r->dumps++);
    kill(r->server.pid, SIGUSR2);
    for (int i = 0; i < 3000 && access(path, F_OK) != 0; i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    return load(path);
}

/* The session both servers get: a bounded load, then replies that must match byte for byte;
 * under the preload, two rounds of 300,000-byte SETs between snapshots (see test_redis). */
static char *redis_session(struct redis *r, bool preload, long long big[3], long long sets[3])
{
    const char *load[] = {"-n", "20000", "-c", "10", "-t", "set,get,incr,lpush,lpop", "-q", NULL};
    free(client(r, "/usr/bin/redis-benchmark", load));
    size_t size = 1 << 16, n = 0;
    char *transcript = calloc(size, 1);
    static const char *const queries[][5] = {{"DBSIZE"},
                                             {"GET", "key:__rand_int__"},
                                             {"GET", "counter:__rand_int__"},
                                             {"LLEN", "mylist"},
                                             {"TYPE", "mylist"}};
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        char *reply = client(r, "/usr/bin/redis-cli", queries[q]);
        n += (size_t)snprintf(transcript + n, size - n, "> %s\n%s", queries[q][0], reply);
        free(reply);
    }
    static const char *const rounds[2] = {"100", "300"};
    for (int round = 0; round <= 2; round++) {
        char *calls = command_calls(r, &sets[round]);
        if (preload) {
            json_t *d = snapshot(r);
            big[round] = requested_bucket(d, 262145);
            json_decref(d);
        }
        n += (size_t)snprintf(transcript + n, size - n, "%s", calls);
        free(calls);
        if (round == 2)
            break;
        const char *sets_of_300k[] = {"-n",     rounds[round], "-c",  "10", "-d",
                                      "300000", "-t",          "set", "-q", NULL};
        free(client(r, "/usr/bin/redis-benchmark", sets_of_300k));
    }
    const char *strlen_query[] = {"STRLEN", "key:__rand_int__", NULL};
    char *reply = client(r, "/usr/bin/redis-cli", strlen_query);
    n += (size_t)snprintf(transcript + n, size - n, "> STRLEN\n%s", reply);
    free(reply);
    const char *shutdown[] = {"SHUTDOWN", "NOSAVE", NULL};
    char out[700];
    snprintf(out, sizeof out, "%s/client.out", r->dir);
    const char *argv[] = {"/usr/bin/redis-cli", "-h",        "127.0.0.1", "-p", r->port,
                          shutdown[0],          shutdown[1], NULL};
    struct env e;
    struct foreign_run stop = {.argv = argv, .env = base_env(&e, "/dev/null", false), .out = out};
    foreign_run(&stop); /* the server closes the connection: no reply to compare */
    return transcript;
}

/* redis-server (Debian's 7.0, on jemalloc) driven by redis-benchmark: the same replies and exit
 * status as natively. valgrind cannot be the reference here: under valgrind
 * malloc_usable_size() returns the requested size, and redis, which sizes its strings by it,
 * then allocates differently. The reference is the program's own count of SET commands
 * (INFO commandstats): each SET of a 300,000-byte value makes one allocation in the
 * 262,145..524,288-byte bucket and nothing else in redis allocates there but the query buffers of
 * the benchmark's 10 connections, which grow into it once or twice a connection depending on how
 * the bytes arrive (the per-round cost varies with the machine's load: 10 to 14 were seen). So
 * each round's bucket grows by its SETs plus 0 to 20: a SET counted twice or lost would be off
 * by 100 or 300. */
static void test_redis(void **state)
{
    (void)state;
    struct redis native = {0}, preloaded = {0};
    long long big[3] = {0}, sets[3] = {0}, native_big[3], native_sets[3];
    start_redis(&native, false);
    char *native_transcript = redis_session(&native, false, native_big, native_sets);
    assert_int_equal(foreign_wait(&native.server), 0);
    start_redis(&preloaded, true);
    char *transcript = redis_session(&preloaded, true, big, sets);
    assert_int_equal(foreign_wait(&preloaded.server), 0);
    assert_same_text("redis replies", native_transcript, transcript);
    assert_int_equal(sets[1] - sets[0], 100);
    assert_int_equal(sets[2] - sets[1], 300);
    long long first_round = big[1] - big[0] - (sets[1] - sets[0]);
    long long second_round = big[2] - big[1] - (sets[2] - sets[1]);
    if (first_round < 0 || first_round > 20 || second_round < 0 || second_round > 20)
        fail_msg("300,000-byte allocations per round: %lld, then %lld; the rounds made %lld and "
                 "%lld SETs, so the per-round costs %lld and %lld are not those of 10 "
                 "connections' buffers (0 to 20)",
                 big[1] - big[0], big[2] - big[1], sets[1] - sets[0], sets[2] - sets[1],
                 first_round, second_round);
    char path[700];
    snprintf(path, sizeof path, "%s/d-%d-3.json", preloaded.dir, (int)preloaded.server.pid);
    json_t *last = load(path);
    assert_string_equal(json_string_value(json_object_get(last, "reason")), "exit");
    assert_true(num(last, "totals.calls.malloc") > 100000);
    json_decref(last);
    free(native_transcript);
    free(transcript);
}

int foreign_programs(void)
{
    const struct CMUnitTest tests[] = {FOREIGN_TEST(test_bash), FOREIGN_TEST(test_python3),
                                       FOREIGN_TEST(test_perl), FOREIGN_TEST(test_git),
                                       FOREIGN_TEST(test_gcc),  FOREIGN_TEST(test_wget),
                                       FOREIGN_TEST(test_redis)};
    return cmocka_run_group_tests_name("foreign programs", tests, NULL, NULL);
}
