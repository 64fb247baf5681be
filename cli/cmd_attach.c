/* qaudit attach PID and qaudit detach PID: audit a server that is already running, without a
 * restart and without gdb. attach stops every thread (ptrace_stop.c), calls the C library's
 * dlopen in one of them to load libqaudit-preload.so and then its qaudit_attach_start with the
 * settings (ptrace_call.c), which redirects the modules' GOT entries of the malloc family to it,
 * and lets every thread go as it was. detach writes a request into the preload's control record
 * (as snapshot does): its writer thread restores every entry, writes the last dump and ends.
 * Each refusal is one line and exit 2, with the process left as it was. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "option_parse.h"
#include "ptrace_inject.h"
#include "qaudit/control.h"
#include "reports/report.h"

#define DEFAULT_OUT "qaudit-%p.json"

static const char attach_usage[] =
    "usage: qaudit attach PID [--stacks MODE] [--out PATTERN] [--for SECONDS] [--preload PATH]\n"
    "                         [--seccomp-ok]\n"
    "  Loads libqaudit-preload.so into the running process PID (ptrace, no gdb) and counts its\n"
    "  allocations from now on, as qaudit run would have: every module's malloc family is\n"
    "  redirected through its GOT, and modules loaded later too. Blocks allocated before are\n"
    "  unknown; their frees are counted apart (totals.preexisting). `qaudit snapshot PID` asks\n"
    "  for a dump, `qaudit detach PID` (or the end of --for) writes the last one and restores\n"
    "  every entry point. Its threads stop while the preload is loaded (the pause is printed).\n"
    "  --stacks MODE   off, sampled:N, sampled:Nb, always (default), fp or queue\n"
    "  --out PATTERN   dump path; %p pid, %n sequence (default " DEFAULT_OUT "); a directory:\n"
    "                  " DEFAULT_OUT " inside it (ending in /: made when missing, for the\n"
    "                  process's user); a later attach's --out holds from then on\n"
    "  --for SECONDS   detach after SECONDS (the command waits)\n"
    "  --preload PATH  the interposer (default: found next to qaudit or installed)\n"
    "  --seccomp-ok    attach to a process under a seccomp filter: the filter must allow what\n"
    "                  the attach calls there (mmap, mprotect, openat, clone, futex...), or it\n"
    "                  may kill the process\n"
    "Exit 0: attached (or attached and detached); 2: not attached, the process as it was: no\n"
    "such process, already preloaded or attached, statically linked, not permitted (ptrace),\n"
    "stopped, traced, under a seccomp filter (without --seccomp-ok), a thread in a system\n"
    "call that cannot be interrupted, or a preload its user cannot read and no memfd there\n"
    "(a preload it cannot read is otherwise loaded from memory, and the attach says so).\n";

static const char detach_usage[] =
    "usage: qaudit detach PID [--timeout S]\n"
    "  Ends qaudit attach's counting in PID: the preload restores every entry point it "
    "redirected,\n"
    "  writes its last dump (printed) and goes inert; the process runs on as it was. Waits up to\n"
    "  S seconds (default 10). Exit 0: detached; 1: no answer within S; 2: no such process, or "
    "not\n"
    "  attached.\n";

struct attach_settings {
    pid_t pid;
    const char *stacks, *out, *preload;
    long for_seconds; /* -1: stay attached */
    bool seccomp_ok;
};

static int refuse(pid_t pid, const char *fmt, const char *detail)
{
    fprintf(stderr, "qaudit attach: not attached to process %d: ", (int)pid);
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
    return 2;
}

/* A seccomp filter decides what each system call the attach makes in the process does, and may
 * kill it for one the program never makes: the attach goes ahead only when told it may (strict
 * mode, which allows only read, write and exit, never). */
static int check_seccomp(pid_t pid, bool seccomp_ok)
{
    char mode[32];
    proc_status_field(pid, "Seccomp:", mode, sizeof mode);
    if (atoi(mode) == 1)
        return refuse(pid, "it runs in seccomp strict mode: any call of the attach would kill it%s",
                      "");
    if (atoi(mode) == 2 && !seccomp_ok)
        return refuse(
            pid,
            "it runs under a seccomp filter, which may kill it for a call the attach "
            "makes there (mmap, openat, memfd_create, clone...); pass --seccomp-ok if the filter "
            "allows them%s",
            "");
    return 0;
}

/* The checks that need no ptrace: the process exists, runs, is nobody else's tracee, is ours. */
static int check_process(pid_t pid)
{
    char state[64], tracer[32], uid[128];
    proc_status_field(pid, "State:", state, sizeof state);
    if (state[0] == '\0')
        return refuse(pid, "no such process%s", "");
    if (state[0] == 'T' || state[0] == 't')
        return refuse(pid, "it is stopped (%s); continue it first", state);
    if (state[0] == 'Z' || state[0] == 'X')
        return refuse(pid, "it has ended (%s)", state);
    proc_status_field(pid, "TracerPid:", tracer, sizeof tracer);
    if (atoi(tracer) != 0)
        return refuse(pid, "it is already traced by process %s (a debugger?)", tracer);
    proc_status_field(pid, "Uid:", uid, sizeof uid);
    uid_t real = (uid_t)strtoul(uid, NULL, 10);
    if (geteuid() != 0 && real != geteuid()) {
        char who[64];
        snprintf(who, sizeof who, "%u (you are %u)", (unsigned)real, (unsigned)geteuid());
        return refuse(pid, "it belongs to user %s; attach as that user or as root", who);
    }
    return 0;
}

/* What the preload already mapped in the process says: -1 none; else its attach state. */
static int preload_state(pid_t pid, struct preload_image *img, struct qaudit_control *c)
{
    int n = preload_images(pid, img, 1);
    if (n <= 0)
        return -1;
    if (!preload_control_current(pid, img, c))
        return -2;
    return (int)c->attach_state;
}

static int check_preload(pid_t pid, int state, const struct qaudit_control *c)
{
    char since[64];
    switch (state) {
    case -1:
    case QAUDIT_ATTACH_DETACHED:
        return 0;
    case -2:
        return refuse(pid, "it has a libqaudit-preload.so of another version loaded%s", "");
    case QAUDIT_ATTACH_NONE:
        return refuse(pid, "it already runs under the preload (%s); use qaudit snapshot",
                      "LD_PRELOAD");
    default:
        snprintf(since, sizeof since, "%.3f", (double)c->attached_at_ns / 1e9);
        return refuse(pid,
                      "it is already attached (counting since %s, epoch seconds); qaudit "
                      "detach it first",
                      since);
    }
}

static bool dynamically_linked(pid_t pid)
{
    struct preload_image img;
    return mapped_modules(pid, "/ld-linux", &img, 1) == 1 ||
           mapped_modules(pid, "/ld-", &img, 1) == 1;
}

/* --out as the pattern the preload expands, absolute (the process has a working directory of
 * its own). A directory gets DEFAULT_OUT inside: one named with a trailing '/' (made when
 * missing, as qaudit run --out makes it) or one that exists. Any other pattern's directory must
 * exist: a missing one is refused (the dumps would go to the fallback directory unasked).
 * 0, or 2 after one line. */
static int out_pattern(const struct attach_settings *s, char *out, size_t size)
{
    char given[PATH_MAX], cwd[PATH_MAX] = "";
    const char *out_arg = s->out ? s->out : DEFAULT_OUT;
    if (out_arg[0] != '/' && getcwd(cwd, sizeof cwd) == NULL)
        return refuse(s->pid, "cannot read the working directory: %s", strerror(errno));
    if (snprintf(given, sizeof given, "%s%s%s", cwd, cwd[0] ? "/" : "", out_arg) >=
        (int)sizeof given)
        return refuse(s->pid, "the --out pattern is too long%s", "");
    struct stat st;
    bool slash = given[strlen(given) - 1] == '/';
    if (slash && stat(given, &st) != 0) {
        uid_t uid;
        gid_t gid;
        process_ids(s->pid, &uid, &gid);
        int err = out_make_directories(given, &uid, gid);
        if (err != 0) {
            char why[PATH_MAX + 64];
            snprintf(why, sizeof why, "%s: %s", given, strerror(err));
            return refuse(s->pid, "cannot make the --out directory %s", why);
        }
    }
    if (stat(given, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (snprintf(out, size, "%s%s%s", given, slash ? "" : "/", DEFAULT_OUT) >= (int)size)
            return refuse(s->pid, "the --out pattern is too long%s", "");
        return 0;
    }
    if (slash)
        return refuse(s->pid, "--out %s is not a directory", out_arg);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", given);
    *strrchr(dir, '/') = '\0';
    if (dir[0] != '\0' && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        char why[2 * PATH_MAX + 64];
        snprintf(why, sizeof why, "%s (of --out %s) does not exist; end --out with / to make it",
                 dir, out_arg);
        return refuse(s->pid, "the directory %s", why);
    }
    if (snprintf(out, size, "%s", given) >= (int)size)
        return refuse(s->pid, "the --out pattern is too long%s", "");
    return 0;
}

/* The settings block qaudit_attach_start reads: NAME=VALUE strings, each NUL-ended, then "".
 * QAUDIT_STACKS only when asked for (the preload's default under attach is always; a later
 * attach keeps the first one's mode); QAUDIT_ATTACH_LIBRARY when loaded from a memfd. */
static size_t settings_block(const struct attach_settings *s, const char *pattern,
                             const char *library, char *out, size_t size)
{
    int n = snprintf(out, size, "QAUDIT_OUT=%s%c", pattern, '\0');
    if (n > 0 && (size_t)n < size && s->stacks != NULL)
        n += snprintf(out + n, size - (size_t)n, "QAUDIT_STACKS=%s%c", s->stacks, '\0');
    /* Loaded from a memfd: the file's path, for the loader's name of the library. */
    if (n > 0 && (size_t)n < size && library != NULL)
        n += snprintf(out + n, size - (size_t)n, "QAUDIT_ATTACH_LIBRARY=%s%c", library, '\0');
    /* Where a dump the directory refuses goes (a process of another user): qaudit's own
     * QAUDIT_FALLBACK_DIR when set, as qaudit run passes it on, else the preload's /tmp. */
    const char *fallback = getenv("QAUDIT_FALLBACK_DIR");
    if (n > 0 && (size_t)n < size && fallback != NULL && fallback[0] == '/')
        n += snprintf(out + n, size - (size_t)n, "QAUDIT_FALLBACK_DIR=%s%c", fallback, '\0');
    if (n > 0 && (size_t)n + 1 < size)
        out[n++] = '\0';
    return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

/* How an attach went, for its lines. */
struct attach_outcome {
    int redirected;   /* entry points redirected */
    bool from_memory; /* the process's user could not read the preload: loaded from a memfd */
    char from_memory_why[1024];
    double pause_ms, stop_ms;
    char notes[QAUDIT_ATTACH_NOTES_MAX]; /* what the preload could not do as asked */
};

/* Loads the preload (unless a detached one is there) and starts it with the settings; 0, or -1
 * after one line. The process's threads are stopped meanwhile. */
static int inject(const struct attach_settings *s, const char *preload, const char *pattern,
                  bool loaded, struct attach_outcome *o)
{
    struct stopped_process *p = calloc(1, sizeof *p);
    char why[1024], settings[PATH_MAX * 3 + 128];
    if (p == NULL)
        return refuse(s->pid, "%s", strerror(ENOMEM)), -1;
    int err = process_stop(s->pid, p, why, sizeof why);
    if (err != 0) {
        if (err == EPERM)
            ptrace_permission_hint(why, sizeof why);
        free(p);
        return refuse(s->pid, "%s", why), -1;
    }
    struct stopped_thread *t = process_pick_thread(p);
    if (!loaded)
        err = attach_load(p, t, preload, &o->from_memory, why, sizeof why);
    if (err == 0 && o->from_memory)
        snprintf(o->from_memory_why, sizeof o->from_memory_why, "%s", why);
    struct preload_image img;
    uint64_t start = 0, result = 0;
    if (err == 0 && (preload_images(s->pid, &img, 1) != 1 ||
                     (start = mapped_function(s->pid, &img, "qaudit_attach_start")) == 0)) {
        snprintf(why, sizeof why, "no qaudit_attach_start in the preload mapped there");
        err = ENOENT;
    }
    size_t size =
        settings_block(s, pattern, o->from_memory ? preload : NULL, settings, sizeof settings);
    if (err == 0 && size == 0) {
        snprintf(why, sizeof why, "the --out pattern is too long");
        err = ENAMETOOLONG;
    }
    if (err == 0)
        err = remote_call(p, t, start, settings, size, 0, &result, why, sizeof why);
    process_release(p);
    o->pause_ms = (double)(monotonic_ns() - p->started_ns) / 1e6;
    o->stop_ms = (double)(p->stopped_ns - p->started_ns) / 1e6;
    free(p);
    if (err != 0)
        return refuse(s->pid, "%s", why), -1;
    o->redirected = (int)(int32_t)result;
    if (o->redirected < 0) {
        snprintf(why, sizeof why, "the preload could not start there: %s",
                 strerror(-o->redirected));
        return refuse(s->pid, "%s", why), -1;
    }
    preload_attach_notes(s->pid, &img, o->notes, sizeof o->notes);
    return 0;
}

/* Writes the detach request and waits for the preload to serve it; exit status. */
static int detach(pid_t pid, long timeout)
{
    struct preload_image img;
    struct qaudit_control c;
    int state = preload_state(pid, &img, &c);
    const char *why = state == -1                   ? "no libqaudit-preload.so is loaded there"
                      : state == -2                 ? "its preload is of another version"
                      : state == QAUDIT_ATTACH_NONE ? "it started under the preload (LD_PRELOAD), "
                                                      "which stays until it exits"
                      : state == QAUDIT_ATTACH_DETACHED ? "it is already detached"
                      : state == QAUDIT_ATTACH_STARTING ? "its attach has not finished"
                                                        : NULL;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        why = "no such process";
    if (why != NULL) {
        fprintf(stderr, "qaudit detach: process %d: %s\n", (int)pid, why);
        return 2;
    }
    uint64_t token = c.detach_served + 1 + (uint64_t)monotonic_ns() % 1000;
    int err =
        preload_control_write(pid, &img, offsetof(struct qaudit_control, detach_request), token);
    if (err != 0) {
        fprintf(stderr, "qaudit detach: cannot write into process %d: %s\n", (int)pid,
                strerror(err));
        return 2;
    }
    long long deadline = monotonic_ns() + timeout * 1000000000ll;
    while (monotonic_ns() < deadline) {
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
        if (preload_control_read(pid, &img, &c) != 0) {
            fprintf(stderr, "qaudit detach: process %d ended before it detached\n", (int)pid);
            return 1;
        }
        if (c.detach_served == token) {
            printf("%s\n", c.last_dump);
            fprintf(stderr,
                    "qaudit detach: process %d runs on without the interposer (last dump "
                    "above)\n",
                    (int)pid);
            return 0;
        }
    }
    fprintf(stderr, "qaudit detach: process %d did not detach within %ld s\n", (int)pid, timeout);
    return 1;
}

/* The program as the user ran it: its command line's first word (a title's too), not the file
 * /proc/PID/exe names (Debian's redis-server is a symlink to redis-check-rdb). */
static void process_name(pid_t pid, char *out, size_t size)
{
    char path[64], line[4096] = "", exe[PATH_MAX] = "";
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(line, 1, sizeof line - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    line[n] = '\0'; /* argv[0] only: it ends at its NUL */
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t len = readlink(path, exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    program_name(line, exe, out, size);
}

/* The attach's lines: counting from now on, where the dumps go, how the library was loaded, and
 * each thing the preload could not do as asked (its notes). */
static void say_attached(const struct attach_settings *s, const char *pattern,
                         const struct attach_outcome *o)
{
    char name[256];
    process_name(s->pid, name, sizeof name);
    fprintf(stderr,
            "qaudit attach: counting in %s (pid %d) from now on, dumps to %s (%d entry points "
            "redirected; its threads paused %.1f ms, %.1f of them to stop all); qaudit snapshot "
            "%d for a dump, qaudit detach %d to end\n",
            name, (int)s->pid, pattern, o->redirected, o->pause_ms, o->stop_ms, (int)s->pid,
            (int)s->pid);
    if (o->from_memory) /* the dump's module map still names the file */
        fprintf(stderr,
                "qaudit attach: %s (pid %d): %s: loaded from memory instead (a memfd, "
                "closed since)\n",
                name, (int)s->pid, o->from_memory_why);
    for (const char *line = o->notes; *line != '\0';) {
        size_t n = strcspn(line, "\n");
        fprintf(stderr, "qaudit attach: %s (pid %d): %.*s\n", name, (int)s->pid, (int)n, line);
        line += n + (line[n] == '\n');
    }
}

static int parse_pid(const char *command, const char *text, pid_t *pid)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end != '\0' || v <= 0 || v > INT_MAX) {
        fprintf(stderr, "qaudit %s: PID must be a process id, got '%s'\n", command, text);
        return 2;
    }
    *pid = (pid_t)v;
    return 0;
}

static int parse_attach(int argc, char **argv, struct attach_settings *s)
{
    const struct option_spec specs[] = {
        {"stacks", 0, OPTION_VALUE, OPTION_STRING, &s->stacks, 0, NULL, "stack mode"},
        {"out", 0, OPTION_VALUE, OPTION_STRING, &s->out, 0, NULL, "dump path pattern"},
        {"for", 0, OPTION_VALUE, OPTION_NUMBER, &s->for_seconds, 0, NULL, "seconds, then detach"},
        {"preload", 0, OPTION_VALUE, OPTION_STRING, &s->preload, 0, NULL, "the interposer"},
        {"seccomp-ok", 0, OPTION_NO_VALUE, OPTION_SET, &s->seccomp_ok, 0, NULL, "seccomp known"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {0}};
    const struct option_table table = {"attach", attach_usage, false, specs};
    int operand = 0, parsed;
    s->for_seconds = -1;
    if ((parsed = option_parse(&table, argc, argv, &operand)) != OPTIONS_PARSED)
        return parsed == 0 ? -1 : parsed;
    if (operand != argc - 1)
        return usage_error("attach", "wants one PID");
    if (s->out != NULL && s->out[0] == '\0')
        return usage_error("attach", "--out wants a path pattern or a directory");
    if (s->stacks != NULL && !stacks_mode_valid(s->stacks))
        return usage_error("attach",
                           "--stacks wants off, sampled:N, sampled:Nb, always, fp or queue");
    return parse_pid("attach", argv[operand], &s->pid);
}

int command_attach(int argc, char **argv)
{
    struct attach_settings s = {0};
    int r = parse_attach(argc, argv, &s);
    if (r != 0)
        return r < 0 ? 0 : r;
#ifndef __x86_64__
    return refuse(s.pid, "qaudit attach is built for x86-64 only%s", "");
#endif
    /* The process first: another user's is refused as such, wherever the preload is. */
    if ((r = check_process(s.pid)) != 0 || (r = check_seccomp(s.pid, s.seccomp_ok)) != 0)
        return r;
    char maps[64], why[512];
    snprintf(maps, sizeof maps, "/proc/%d/maps", (int)s.pid);
    FILE *readable = fopen(maps, "r"); /* opening asks what ptrace would: a process that is */
    if (readable == NULL) {            /* not dumpable refuses it, even to its own user */
        ptrace_permission_hint(why, sizeof why);
        return refuse(s.pid, "%s", why);
    }
    fclose(readable);
    char preload[PATH_MAX], absolute[PATH_MAX];
    if (s.preload ? snprintf(preload, sizeof preload, "%s", s.preload) < 0
                  : !preload_find(preload, sizeof preload))
        return refuse(s.pid, "cannot find libqaudit-preload.so (pass --preload PATH)%s", "");
    if (realpath(preload, absolute) == NULL)
        return refuse(s.pid, "cannot read the preload %s", preload);
    if (!dynamically_linked(s.pid))
        return refuse(s.pid,
                      "it is statically linked (no dynamic loader mapped): there is no "
                      "dlopen to load the preload with%s",
                      "");
    struct preload_image img;
    struct qaudit_control c;
    int state = preload_state(s.pid, &img, &c);
    if ((r = check_preload(s.pid, state, &c)) != 0)
        return r;
    if (state == -1 && libc_function(s.pid, "dlopen") == 0)
        return refuse(s.pid, "no dlopen found in its C library%s", "");
    char pattern[PATH_MAX];
    if ((r = out_pattern(&s, pattern, sizeof pattern)) != 0)
        return r;
    struct attach_outcome o = {0};
    if (inject(&s, absolute, pattern, state != -1, &o) != 0)
        return 2;
    say_attached(&s, pattern, &o);
    if (s.for_seconds < 0)
        return 0;
    nanosleep(&(struct timespec){s.for_seconds, 0}, NULL);
    return detach(s.pid, 10);
}

int command_detach(int argc, char **argv)
{
    long timeout = 10;
    const struct option_spec specs[] = {
        {"timeout", 0, OPTION_VALUE, OPTION_NUMBER, &timeout, 1, NULL, "seconds to wait"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {0}};
    const struct option_table table = {"detach", detach_usage, false, specs};
    int operand = 0, parsed = option_parse(&table, argc, argv, &operand);
    if (parsed != OPTIONS_PARSED)
        return parsed;
    if (operand != argc - 1)
        return usage_error("detach", "wants one PID");
    pid_t pid;
    int r = parse_pid("detach", argv[operand], &pid);
    return r != 0 ? r : detach(pid, timeout);
}
