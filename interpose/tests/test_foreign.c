/* Proof on programs nobody here wrote (issue 12, point 7), in three groups (the first argument
 * picks one; none runs all):
 * - programs: Debian's bash, python3, perl, git, gcc and redis-server under the preload print
 *   and exit exactly as natively (the interposer's own "qaudit: " lines aside), and their dumps
 *   agree process by process with valgrind's totals or with the program's own counters;
 * - host: the host-safety repros of points 1 and 4 (fds 3 and 4, close_range, dup2 over every
 *   fd, a double-fork daemon, the dump signal claimed by the program, one file per process);
 * - stress: fixture_stress under every stack mode: no crash, no hang, its own counts exact.
 * A second argument picks tests by name (a cmocka filter: test_stress_fp, test_*daemon*). */
#include <arpa/inet.h>
#include <dirent.h>
#include <ftw.h>
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

#include "foreign_run.h"
#include "harness.h"

static char work[256]; /* this test's directory, removed after it */

static int make_work(void **state)
{
    (void)state;
    snprintf(work, sizeof work, "/tmp/qaudit-foreign-XXXXXX");
    return mkdtemp(work) ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

static int remove_work(void **state)
{
    (void)state;
    if (getenv("QAUDIT_KEEP_TEST_DIRS") == NULL)
        nftw(work, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* work/name (made if missing) into buf. */
static const char *in_work(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", work, name);
    mkdir(buf, 0700);
    return buf;
}

/* The environment every run gets in full, so that native, preloaded and valgrind runs differ
 * only in LD_PRELOAD: valgrind.bin adds LD_PRELOAD (and VALGRIND_LIB for exec'd children). */
struct env {
    char text[8][700];
    const char *list[16];
};

static const char *const *base_env(struct env *e, const char *qaudit_out, bool preload)
{
    size_t n = 0;
    e->list[n++] = "PATH=/usr/bin:/bin";
    e->list[n++] = "LANG=C";
    e->list[n++] = "LC_ALL=C";
    e->list[n++] = "VALGRIND_LIB=/usr/libexec/valgrind";
    snprintf(e->text[0], sizeof e->text[0], "HOME=%s", work);
    snprintf(e->text[1], sizeof e->text[1], "TMPDIR=%s", work);
    snprintf(e->text[2], sizeof e->text[2], "QAUDIT_OUT=%s", qaudit_out);
    snprintf(e->text[3], sizeof e->text[3], "LD_PRELOAD=%s", PRELOAD_PATH);
    for (int i = 0; i < (preload ? 4 : 3); i++)
        e->list[n++] = e->text[i];
    e->list[n] = NULL;
    return e->list;
}

static void assert_same_text(const char *what, const char *native, const char *preloaded)
{
    if (strcmp(native, preloaded) != 0)
        fail_msg("%s differs under the preload.\n--- native:\n%.2000s\n--- preloaded:\n%.2000s",
                 what, native, preloaded);
}

/* The file work/run/name of two runs, byte for byte. */
static void assert_same_file(const char *native_dir, const char *preload_dir, const char *name)
{
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/%s", native_dir, name);
    snprintf(b, sizeof b, "%s/%s", preload_dir, name);
    size_t la, lb;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    if (la == 0 || la != lb || memcmp(x, y, la) != 0)
        fail_msg("%s: %zu bytes natively, %zu under the preload, or different bytes", name, la, lb);
    free(x);
    free(y);
}

/* ---------------------------------------------------------------- programs */

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
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); /* a previous command's */
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

/* Per process, the exit dump's allocs + reallocs and frees + reallocs equal valgrind's "total
 * heap usage: N allocs, M frees" (valgrind counts a realloc as one of each). */
static void assert_totals_agree(const char *qaudit_dir, const char *valgrind_dir, size_t processes)
{
    struct process_totals q[16], v[16];
    size_t nq = dump_totals(qaudit_dir, q, 16), nv = valgrind_totals(valgrind_dir, v, 16);
    char qs[1024], vs[1024];
    print_totals(qs, sizeof qs, q, nq);
    print_totals(vs, sizeof vs, v, nv);
    bool same = nq == processes && nv == processes;
    for (size_t i = 0; same && i < nq; i++)
        same = strcmp(q[i].name, v[i].name) == 0 && q[i].allocs == v[i].allocs &&
               q[i].frees == v[i].frees;
    if (!same)
        fail_msg("per process allocs/frees, %zu processes expected:\n  qaudit: %s\n  valgrind:%s",
                 processes, qs, vs);
}

static void check_program(const struct program *p)
{
    char native[600], preload[600], valgrind[600], path[700];
    int native_status = run_kind(p, 'n', native, sizeof native);
    int preload_status = run_kind(p, 'q', preload, sizeof preload);
    int valgrind_status = run_kind(p, 'v', valgrind, sizeof valgrind);
    assert_int_equal(native_status, p->status);
    assert_int_equal(preload_status, p->status);
    assert_int_equal(valgrind_status, p->status);
    snprintf(path, sizeof path, "%s/out", native);
    char *native_out = slurp(path, NULL);
    snprintf(path, sizeof path, "%s/err", native);
    char *native_err = slurp(path, NULL);
    snprintf(path, sizeof path, "%s/out", preload);
    char *preload_out = slurp(path, NULL);
    snprintf(path, sizeof path, "%s/err", preload);
    char *preload_all_err = slurp(path, NULL);
    char *preload_err = without_qaudit_lines(preload_all_err);
    assert_same_text("stdout", native_out, preload_out);
    assert_same_text("stderr", native_err, preload_err);
    if (p->product)
        assert_same_file(native, preload, p->product);
    assert_totals_agree(preload, valgrind, p->processes);
    free(native_out), free(native_err), free(preload_out), free(preload_all_err);
    free(preload_err);
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
    for (int i = 0; i < 300 && !accepts(atoi(r->port)); i++)
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

static long long requested_bucket(json_t *dump, long long from)
{
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(dump, "requested_sizes"), i, b)
    {
        if (json_integer_value(json_object_get(b, "from")) == from)
            return json_integer_value(json_object_get(b, "count"));
    }
    return 0;
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

/* ---------------------------------------------------------------- host safety */

/* A dump of pid in dir as d-PID-N.json, or NULL. */
static json_t *dump_n(const char *dir, pid_t pid, int n)
{
    char path[700];
    snprintf(path, sizeof path, "%s/d-%d-%d.json", dir, (int)pid, n);
    return access(path, F_OK) == 0 ? load(path) : NULL;
}

static const char *text_of(json_t *object, const char *key)
{
    const char *text = json_string_value(json_object_get(object, key));
    return text ? text : "";
}

static const char *reason(json_t *dump)
{
    return text_of(dump, "reason");
}

/* The process left exactly the dumps of these reasons, in order, with QAUDIT_OUT=d-%p-%n. */
static void assert_dumps(const char *dir, pid_t pid, const char *const *reasons)
{
    int n = 0;
    for (; reasons[n]; n++) {
        json_t *d = dump_n(dir, pid, n);
        if (d == NULL)
            fail_msg("process %d: no dump %d (%s) in %s", (int)pid, n, reasons[n], dir);
        if (strcmp(reason(d), reasons[n]) != 0)
            fail_msg("process %d: dump %d is for \"%s\", not \"%s\"", (int)pid, n, reason(d),
                     reasons[n]);
        json_decref(d);
    }
    json_t *more = dump_n(dir, pid, n);
    if (more != NULL)
        fail_msg("process %d wrote more dumps than the %d expected (one more for \"%s\")", (int)pid,
                 n, reason(more));
}

/* bash under the preload, QAUDIT_OUT=work/d-%p-%n.json; its stdout. */
static char *preloaded_bash(const char *script, pid_t *pid, int *status)
{
    char pattern[600], out[600];
    snprintf(pattern, sizeof pattern, "%s/d-%%p-%%n.json", work);
    snprintf(out, sizeof out, "%s/stdout", work);
    const char *argv[] = {"/usr/bin/bash", "-c", script, NULL};
    struct env e;
    struct foreign_run run = {
        .argv = argv, .env = base_env(&e, pattern, true), .dir = work, .out = out, .limit_s = 60};
    *status = foreign_run(&run);
    *pid = run.pid;
    return slurp(out, NULL);
}

/* Issue 12's first repro: the program's fd 3, opened after start-up, is read to its end after
 * a dump signal. */
static void test_fd3_input_survives_the_dump_signal(void **state)
{
    (void)state;
    char script[1200], path[600];
    snprintf(path, sizeof path, "%s/l.txt", work);
    FILE *f = fopen(path, "w");
    for (int i = 1; i <= 1000; i++)
        fprintf(f, "%d\n", i);
    fclose(f);
    snprintf(script, sizeof script,
             "sleep 0.3; exec 3<%s; kill -USR2 $$; sleep 0.3; n=0; "
             "while read -r l <&3; do n=$((n+1)); done; echo $n",
             path);
    pid_t pid;
    int status;
    char *out = preloaded_bash(script, &pid, &status);
    assert_int_equal(status, 0);
    assert_string_equal(out, "1000\n");
    assert_dumps(work, pid, (const char *[]){"signal", "exit", NULL});
    free(out);
}

/* The second repro: writes on the program's fd 4 around a dump signal. */
static void test_fd4_output_survives_the_dump_signal(void **state)
{
    (void)state;
    char script[1200], path[600];
    snprintf(path, sizeof path, "%s/o", work);
    snprintf(script, sizeof script, "exec 4>%s; echo A >&4; kill -USR2 $$; sleep 0.2; echo B >&4",
             path);
    pid_t pid;
    int status;
    free(preloaded_bash(script, &pid, &status));
    assert_int_equal(status, 0);
    char *o = slurp(path, NULL);
    assert_string_equal(o, "A\nB\n");
    assert_dumps(work, pid, (const char *[]){"signal", "exit", NULL});
    free(o);
}

/* fixture_hostile MODE natively and under the preload (QAUDIT_OUT=d-%p-%n.json), each in its
 * own directory; stdout, stderr without qaudit's lines, and exit status must match. With
 * reap, the runs wait for every descendant (a daemon): this process becomes a subreaper. */
struct hostile {
    char native[600], preload[600];
    pid_t pid;        /* the preloaded run's */
    char *qaudit_err; /* its whole stderr */
};

static int run_hostile(const char *mode, const char *dir, bool preload, pid_t *pid)
{
    char pattern[700], out[700], err[700];
    snprintf(pattern, sizeof pattern, "%s/d-%%p-%%n.json", dir);
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    const char *argv[] = {FIXTURE("fixture_hostile"), mode, dir, NULL};
    struct env e;
    struct foreign_run run = {.argv = argv,
                              .env = base_env(&e, pattern, preload),
                              .dir = dir,
                              .out = out,
                              .err = err,
                              .limit_s = 120};
    int status = foreign_run(&run);
    *pid = run.pid;
    /* A daemon was re-parented to us (the subreaper): wait for it too. */
    for (int i = 0; i < 12000 && waitpid(-1, NULL, WNOHANG) >= 0; i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    return status;
}

static void compare_hostile(const char *mode, struct hostile *h)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    in_work(h->native, sizeof h->native, "native");
    in_work(h->preload, sizeof h->preload, "qaudit");
    pid_t native_pid;
    int native_status = run_hostile(mode, h->native, false, &native_pid);
    int status = run_hostile(mode, h->preload, true, &h->pid);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    assert_int_equal(native_status, 0);
    assert_int_equal(status, native_status);
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/stdout", h->native);
    snprintf(b, sizeof b, "%s/stdout", h->preload);
    char *native_out = slurp(a, NULL), *out = slurp(b, NULL);
    assert_same_text("stdout", native_out, out);
    snprintf(a, sizeof a, "%s/stderr", h->native);
    snprintf(b, sizeof b, "%s/stderr", h->preload);
    char *native_err = slurp(a, NULL);
    h->qaudit_err = slurp(b, NULL);
    char *err = without_qaudit_lines(h->qaudit_err);
    assert_same_text("stderr", native_err, err);
    free(native_out), free(out), free(native_err), free(err);
}

static void test_close_range(void **state)
{
    (void)state;
    struct hostile h;
    compare_hostile("close_range", &h);
    assert_dumps(h.preload, h.pid, (const char *[]){"signal", "exit", NULL});
    free(h.qaudit_err);
}

static void test_dup2_over_every_fd(void **state)
{
    (void)state;
    struct hostile h;
    compare_hostile("dup2", &h);
    assert_dumps(h.preload, h.pid, (const char *[]){"signal", "exit", NULL});
    free(h.qaudit_err);
}

/* The daemon's own report (result.txt) must match too; the daemon, a grandchild that closed
 * every fd, still dumps on the signal and at its exit. */
static void test_double_fork_daemon(void **state)
{
    (void)state;
    struct hostile h;
    compare_hostile("daemon", &h);
    assert_same_file(h.native, h.preload, "result.txt");
    char path[700];
    snprintf(path, sizeof path, "%s/daemon.pid", h.preload);
    char *text = slurp(path, NULL);
    pid_t daemon = atoi(text);
    assert_true(daemon > 0);
    assert_dumps(h.preload, daemon, (const char *[]){"signal", "exit", NULL});
    free(text);
    free(h.qaudit_err);
}

/* The program handles the dump signal itself: its handler sees every signal, it reads its own
 * handler back, and the interposer says so in exactly one line and makes no dump for them. */
static void test_own_handler_for_the_dump_signal(void **state)
{
    (void)state;
    struct hostile h;
    compare_hostile("own_handler", &h);
    int lines = count_lines_starting(h.qaudit_err, "qaudit: ");
    if (lines != 1 || strstr(h.qaudit_err, "on-demand dumps are off") == NULL)
        fail_msg("wanted one qaudit line saying on-demand dumps are off; stderr:\n%s",
                 h.qaudit_err);
    assert_dumps(h.preload, h.pid, (const char *[]){"exit", NULL});
    free(h.qaudit_err);
}

/* The fourth repro: QAUDIT_OUT without %p and three processes (bash, seq, ls). Each
 * process's exit dump is in a file of its own; a name that carries a pid (nop.PID.json or
 * nop.PID.K.json) carries that dump's. Dumps of exec'd-from images may add files. */
static void test_one_file_per_process(void **state)
{
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/nop.json", work);
    const char *argv[] = {"/usr/bin/bash", "-c", "seq 3 >/dev/null; ls / >/dev/null", NULL};
    struct env e;
    struct foreign_run run = {.argv = argv, .env = base_env(&e, out, true), .limit_s = 60};
    assert_int_equal(foreign_run(&run), 0);
    DIR *d = opendir(work);
    struct dirent *entry;
    int exits = 0;
    char names[3][16] = {{0}};
    pid_t pids[3] = {0};
    while ((entry = readdir(d)) != NULL) {
        size_t len = strlen(entry->d_name);
        if (strncmp(entry->d_name, "nop.", 4) != 0 || strstr(entry->d_name, ".tmp"))
            continue;
        if (len < 5 || strcmp(entry->d_name + len - 5, ".json") != 0)
            fail_msg("%s: a dump whose name does not end in .json", entry->d_name);
        snprintf(out, sizeof out, "%s/%s", work, entry->d_name);
        json_t *dump = load(out);
        pid_t pid = (pid_t)num(dump, "process.pid");
        int named = 0;
        if (sscanf(entry->d_name, "nop.%d.", &named) == 1 && named != pid)
            fail_msg("%s holds the dump of process %d", entry->d_name, (int)pid);
        if (strcmp(reason(dump), "exit") == 0) {
            if (exits == 3)
                fail_msg("more than three exit dumps");
            const char *exe = text_of(json_object_get(dump, "process"), "exe");
            const char *slash = strrchr(exe, '/');
            snprintf(names[exits], sizeof names[exits], "%s", slash ? slash + 1 : exe);
            pids[exits++] = pid;
        }
        json_decref(dump);
    }
    closedir(d);
    assert_int_equal(exits, 3);
    assert_true(pids[0] != pids[1] && pids[1] != pids[2] && pids[0] != pids[2]);
    qsort(names, 3, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    assert_string_equal(names[0], "bash");
    assert_string_equal(names[1], "ls");
    assert_string_equal(names[2], "seq");
}

/* ---------------------------------------------------------------- stress */

/* The path of the module holding a frame's address, or "?". */
static const char *module_of(json_t *dump, const char *frame)
{
    unsigned long long at = strtoull(frame, NULL, 16);
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(dump, "modules"), i, m)
    {
        unsigned long long from = strtoull(text_of(m, "start"), NULL, 16);
        unsigned long long to = strtoull(text_of(m, "end"), NULL, 16);
        if (at >= from && at < to)
            return text_of(m, "path");
    }
    return "?";
}

/* The site of the fixture's own call that made exactly allocs blocks, or NULL. */
static json_t *own_site(json_t *dump, long long allocs)
{
    size_t i;
    json_t *site;
    json_array_foreach(json_object_get(dump, "sites"), i, site)
    {
        const char *innermost =
            json_string_value(json_array_get(json_object_get(site, "frames"), 0));
        if (json_integer_value(json_object_get(site, "allocs")) == allocs && innermost &&
            strstr(module_of(dump, innermost), "fixture_stress"))
            return site;
    }
    return NULL;
}

static void assert_count(const char *what, long long counted, long long made)
{
    if (counted != made)
        fail_msg("%s: %lld in the dump, %lld made by the program", what, counted, made);
}

/* Allocations credited to sites without a single frame (the stack could not be taken). */
static long long frameless_allocs(json_t *dump)
{
    long long sum = 0;
    size_t i;
    json_t *site;
    json_array_foreach(json_object_get(dump, "sites"), i, site)
    {
        if (json_array_size(json_object_get(site, "frames")) == 0)
            sum += json_integer_value(json_object_get(site, "allocs"));
    }
    return sum;
}

static void assert_site_balanced(json_t *dump, long long allocs, const char *what)
{
    json_t *site = own_site(dump, allocs);
    if (site == NULL)
        fail_msg("no site of the fixture's %s with %lld allocations (sites without frames hold "
                 "%lld)",
                 what, allocs, frameless_allocs(dump));
    assert_count("frees at that site", json_integer_value(json_object_get(site, "frees")), allocs);
    assert_count("live bytes at that site", json_integer_value(json_object_get(site, "live_bytes")),
                 0);
}

struct stress_counts {
    long workers, worker_frees, shorts, short_frees;
    int child, child_blocks, plugin_loads, signals;
};

/* The parent's dumps: exactly one at exit (returned), between 1 and 50 on the signal. */
static json_t *parent_exit_dump(const char *dir, pid_t pid)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char prefix[32], path[1200];
    snprintf(prefix, sizeof prefix, "d-%d-", (int)pid);
    json_t *exit_dump = NULL;
    int signal_dumps = 0;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || strstr(e->d_name, ".tmp"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        json_t *dump = load(path);
        if (strcmp(reason(dump), "exit") == 0 && exit_dump == NULL) {
            exit_dump = dump;
            continue;
        }
        if (strcmp(reason(dump), "signal") != 0)
            fail_msg("%s: a dump for \"%s\"", e->d_name, reason(dump));
        signal_dumps++;
        json_decref(dump);
    }
    closedir(d);
    if (exit_dump == NULL)
        fail_msg("no exit dump of the stress program");
    if (signal_dumps < 1 || signal_dumps > 50)
        fail_msg("%d dumps on the signal, for 50 signals sent", signal_dumps);
    return exit_dump;
}

/* A run takes 1 to 2 s on 2 cores: a run still going after this has hung. */
enum { STRESS_LIMIT_S = 120 };

/* Runs fixture_stress under QAUDIT_STACKS=mode in dir (killed after STRESS_LIMIT_S) and reads
 * the counts it prints of its own blocks; returns its pid. */
static pid_t run_stress(const char *mode, const char *dir, struct stress_counts *c)
{
    char pattern[700], out[700], err[700], stacks[64];
    snprintf(pattern, sizeof pattern, "%s/d-%%p-%%n.json", dir);
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    snprintf(stacks, sizeof stacks, "QAUDIT_STACKS=%s", mode);
    const char *argv[] = {FIXTURE("fixture_stress"), FIXTURE_LIB_DIR "/libfixture_plugin.so", NULL};
    const char *extra[] = {stacks, NULL};
    struct env e;
    struct foreign_run run = {.argv = argv,
                              .env = base_env(&e, pattern, true),
                              .extra = extra,
                              .out = out,
                              .err = err,
                              .limit_s = STRESS_LIMIT_S};
    int status = foreign_run(&run);
    char *said = slurp(err, NULL);
    if (status == RUN_TIMED_OUT)
        fail_msg("%s: still running after %d s (killed); stderr:\n%.2000s", mode, STRESS_LIMIT_S,
                 said);
    if (status != 0)
        fail_msg("%s: exit %d; stderr:\n%.2000s", mode, status, said);
    free(said);
    char *text = slurp(out, NULL);
    int fields = sscanf(text,
                        "workers %ld allocs %ld frees, short threads %ld allocs %ld frees, "
                        "child %d made %d, plugin loads %d, signals %d",
                        &c->workers, &c->worker_frees, &c->shorts, &c->short_frees, &c->child,
                        &c->child_blocks, &c->plugin_loads, &c->signals);
    free(text);
    assert_int_equal(fields, 8);
    assert_int_equal(c->workers, 16 * 20000);
    assert_int_equal(c->shorts, 20000);
    assert_int_equal(c->signals, 50);
    assert_int_equal(c->plugin_loads, 200);
    return run.pid;
}

/* The program's own blocks, each kind in a bucket of its own, counted exactly; with a stack for
 * every allocation (always, fp), each kind's one call site holds them all, every one freed. */
static void stress(const char *mode)
{
    char dir[600];
    in_work(dir, sizeof dir, "stress");
    struct stress_counts c;
    pid_t pid = run_stress(mode, dir, &c);
    bool every_stack = strcmp(mode, "always") == 0 || strcmp(mode, "fp") == 0;
    json_t *parent = parent_exit_dump(dir, pid);
    assert_count("workers' blocks (449..464 bytes)", requested_bucket(parent, 449), c.workers);
    assert_count("short threads' blocks (465..480)", requested_bucket(parent, 465), c.shorts);
    assert_count("the child's sizes (481..496) in the parent", requested_bucket(parent, 481), 0);
    if (every_stack) {
        assert_site_balanced(parent, c.workers, "workers' blocks");
        assert_site_balanced(parent, c.shorts, "short threads' blocks");
    }
    json_decref(parent);
    json_t *child = dump_n(dir, c.child, 0);
    if (child == NULL)
        fail_msg("no dump of the child forked from a worker (pid %d)", c.child);
    assert_string_equal(reason(child), "exit");
    assert_count("the child's blocks (481..496)", requested_bucket(child, 481), c.child_blocks);
    assert_count("workers' sizes (449..464) in the child", requested_bucket(child, 449), 0);
    if (every_stack)
        assert_site_balanced(child, c.child_blocks, "forked child's blocks");
    json_decref(child);
}

static void test_stress_off(void **state)
{
    (void)state;
    stress("off");
}

static void test_stress_sampled_64(void **state)
{
    (void)state;
    stress("sampled:64");
}

static void test_stress_sampled_4096b(void **state)
{
    (void)state;
    stress("sampled:4096b");
}

static void test_stress_always(void **state)
{
    (void)state;
    stress("always");
}

static void test_stress_fp(void **state)
{
    (void)state;
    stress("fp");
}

static void test_stress_queue(void **state)
{
    (void)state;
    stress("queue");
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, make_work, remove_work)

int main(int argc, char **argv)
{
    const struct CMUnitTest programs[] = {TEST(test_bash), TEST(test_python3), TEST(test_perl),
                                          TEST(test_git),  TEST(test_gcc),     TEST(test_redis)};
    const struct CMUnitTest host[] = {TEST(test_fd3_input_survives_the_dump_signal),
                                      TEST(test_fd4_output_survives_the_dump_signal),
                                      TEST(test_close_range),
                                      TEST(test_dup2_over_every_fd),
                                      TEST(test_double_fork_daemon),
                                      TEST(test_own_handler_for_the_dump_signal),
                                      TEST(test_one_file_per_process)};
    const struct CMUnitTest stress_modes[] = {
        TEST(test_stress_off),    TEST(test_stress_sampled_64), TEST(test_stress_sampled_4096b),
        TEST(test_stress_always), TEST(test_stress_fp),         TEST(test_stress_queue)};
    const char *group = argc > 1 ? argv[1] : "all";
    if (argc > 2)
        cmocka_set_test_filter(argv[2]); /* a test name or a glob, for one case */
    int failed = 0;
    if (strcmp(group, "programs") == 0 || strcmp(group, "all") == 0)
        failed += cmocka_run_group_tests_name("foreign programs", programs, NULL, NULL);
    if (strcmp(group, "host") == 0 || strcmp(group, "all") == 0)
        failed += cmocka_run_group_tests_name("host safety", host, NULL, NULL);
    if (strcmp(group, "stress") == 0 || strcmp(group, "all") == 0)
        failed += cmocka_run_group_tests_name("stress", stress_modes, NULL, NULL);
    return failed;
}
