/* Running programs nobody here wrote for test_foreign: an exact environment (so that native,
 * preloaded and valgrind runs differ only where they must), output in files, a time limit, and
 * the totals per process from qaudit's exit dumps and valgrind's logs. */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "foreign_run.h"

static void redirect(const char *path, int flags, int to)
{
    int fd = open(path ? path : "/dev/null", flags, 0600);
    if (fd < 0 || dup2(fd, to) < 0)
        _exit(126);
    if (fd != to)
        close(fd);
}

/* In the child: the user's groups and ids (as root: servers that must not run as root, or that
 * are to be tried without root). */
static void become(const char *user)
{
    struct passwd *pw = user ? getpwnam(user) : NULL;
    if (user == NULL)
        return;
    if (pw == NULL || initgroups(user, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 ||
        setuid(pw->pw_uid) != 0)
        _exit(126);
}

/* In the child: only fds 0..2, no core files, its own process group, addresses not randomised
 * (cc1 sizes some tables by the addresses it hashes: one run in six made one more allocation,
 * and valgrind's own layout is fixed), then exec. */
static void exec_child(const struct foreign_run *run)
{
    setpgid(0, 0);
    personality(ADDR_NO_RANDOMIZE);
    setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0});
    if (run->dir != NULL && chdir(run->dir) != 0)
        _exit(126);
    redirect(run->in, O_RDONLY, 0);
    redirect(run->out, O_WRONLY | O_CREAT | O_TRUNC, 1);
    redirect(run->err, O_WRONLY | O_CREAT | O_TRUNC, 2);
    close_range(3, ~0U, 0);
    become(run->user);
    const char *envp[128];
    size_t n = 0;
    for (size_t i = 0; run->env && run->env[i] && n < 126; i++)
        envp[n++] = run->env[i];
    for (size_t i = 0; run->extra && run->extra[i] && n < 126; i++)
        envp[n++] = run->extra[i];
    envp[n] = NULL;
    execve(run->argv[0], (char *const *)run->argv, (char *const *)envp);
    _exit(127);
}

void foreign_start(struct foreign_run *run)
{
    pid_t pid = fork();
    if (pid == 0)
        exec_child(run);
    run->pid = pid;
}

int foreign_wait(struct foreign_run *run)
{
    pid_t pid = run->pid;
    long limit_ms = (run->limit_s > 0 ? run->limit_s : 300) * 1000L;
    int status;
    for (long waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited += 10) {
        if (waited >= limit_ms) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return RUN_TIMED_OUT;
        }
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(-pid, SIGKILL); /* what it left behind in its group (a forked child still hanging) */
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int foreign_run(struct foreign_run *run)
{
    foreign_start(run);
    return foreign_wait(run);
}

char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    size_t size = 0, cap = 4096;
    char *text = malloc(cap);
    size_t n;
    while (f && (n = fread(text + size, 1, cap - size - 1, f)) > 0) {
        size += n;
        if (cap - size < 2)
            text = realloc(text, cap *= 2);
    }
    if (f)
        fclose(f);
    text[size] = '\0';
    if (len)
        *len = size;
    return text;
}

void spill(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    fputs(text, f);
    fclose(f);
}

char *without_qaudit_lines(const char *text)
{
    char *kept = malloc(strlen(text) + 1);
    size_t n = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, "qaudit: ", 8) != 0) {
            memcpy(kept + n, line, len);
            n += len;
        }
        line += len;
    }
    kept[n] = '\0';
    return kept;
}

int count_lines_starting(const char *text, const char *prefix)
{
    int count = 0;
    for (const char *line = text; line != NULL && *line != '\0';) {
        count += strncmp(line, prefix, strlen(prefix)) == 0;
        const char *end = strchr(line, '\n');
        line = end ? end + 1 : NULL;
    }
    return count;
}

static int by_name(const void *a, const void *b)
{
    const struct process_totals *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->allocs > y->allocs) - (x->allocs < y->allocs);
}

static void set_name(struct process_totals *t, const char *path)
{
    const char *slash = strrchr(path, '/');
    snprintf(t->name, sizeof t->name, "%.63s", slash ? slash + 1 : path);
}

/* "1,234" as 1234. */
static long long without_commas(const char *digits)
{
    long long n = 0;
    for (const char *c = digits; *c; c++)
        n = *c == ',' ? n : n * 10 + (*c - '0');
    return n;
}

/* "Command: /usr/bin/seq 200" and "total heap usage: 6 allocs, 1 frees, ..." of one log. */
static bool parse_valgrind_log(const char *path, struct process_totals *t)
{
    char *log = slurp(path, NULL);
    const char *command = strstr(log, "Command: ");
    const char *usage = strstr(log, "total heap usage: ");
    bool ok = command != NULL && usage != NULL;
    if (ok) {
        char program[256];
        sscanf(command + 9, "%255s", program);
        set_name(t, program);
        char allocs[32], frees[32], bytes[32];
        ok = sscanf(usage + 18, "%31[0-9,] allocs, %31[0-9,] frees, %31[0-9,] bytes", allocs, frees,
                    bytes) == 3;
        t->allocs = ok ? without_commas(allocs) : 0;
        t->frees = ok ? without_commas(frees) : 0;
        t->bytes = ok ? without_commas(bytes) : 0;
    }
    free(log);
    return ok;
}

/* The totals parse reads from each file of dir that wanted accepts, up to max, sorted by name;
 * how many. */
static size_t collect_totals(const char *dir, bool (*wanted)(const char *name),
                             bool (*parse)(const char *path, struct process_totals *t),
                             struct process_totals *out, size_t max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    char path[600];
    while (d && (e = readdir(d)) != NULL && n < max) {
        if (!wanted(e->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        n += parse(path, &out[n]);
    }
    if (d)
        closedir(d);
    qsort(out, n, sizeof *out, by_name);
    return n;
}

static bool is_valgrind_log(const char *name)
{
    return strncmp(name, "vg.", 3) == 0;
}

size_t valgrind_totals(const char *dir, struct process_totals *out, size_t max)
{
    return collect_totals(dir, is_valgrind_log, parse_valgrind_log, out, max);
}

static long long total(json_t *dump, const char *key)
{
    return json_integer_value(json_object_get(json_object_get(dump, "totals"), key));
}

/* A dump's totals as valgrind counts them: every realloc of a live block is one more
 * allocation and one more free. */
static bool parse_dump(const char *path, struct process_totals *t)
{
    json_t *dump = json_load_file(path, 0, NULL);
    const char *reason = json_string_value(json_object_get(dump, "reason"));
    json_t *argv = json_object_get(json_object_get(dump, "process"), "argv");
    bool ok = reason != NULL && strcmp(reason, "exit") == 0 && json_array_size(argv) > 0;
    if (ok) {
        set_name(t, json_string_value(json_array_get(argv, 0)));
        t->allocs = total(dump, "allocs") + total(dump, "reallocs");
        t->frees = total(dump, "frees") + total(dump, "reallocs");
        t->bytes = total(dump, "bytes_requested");
    }
    json_decref(dump);
    return ok;
}

/* A finished dump: *.json, not a writer's temporary. */
static bool is_dump(const char *name)
{
    size_t len = strlen(name);
    return len >= 5 && strcmp(name + len - 5, ".json") == 0 && strstr(name, ".tmp") == NULL;
}

size_t dump_totals(const char *dir, struct process_totals *out, size_t max)
{
    return collect_totals(dir, is_dump, parse_dump, out, max);
}

const char *valgrind_path(void)
{
    return access("/usr/bin/valgrind.bin", X_OK) == 0 ? "/usr/bin/valgrind.bin"
                                                      : "/usr/bin/valgrind";
}
