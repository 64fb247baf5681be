/* qaudit run: runs a program with libqaudit-preload.so, says its pid, passes signals through,
 * returns the program's exit status, then says where the dump is, what it holds and what to run
 * next. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "option_parse.h"

#ifndef QAUDIT_INSTALLED_PRELOAD
#define QAUDIT_INSTALLED_PRELOAD "/usr/local/lib/libqaudit-preload.so"
#endif

/* Without --stacks: a stack for every allocation, so every block live at exit has its site and
 * no leak can hide between samples (docs/report-format.md, "Live at exit"); a heap profiler's
 * cost (bench/RESULTS.md). sampled:65536b is the cheap mode for long runs. */
#define DEFAULT_STACKS "always"
/* The preload's own default name (docs/dump-format.md), also used inside an --out directory. */
#define DEFAULT_OUT "qaudit-%p.json"

static const char run_usage[] =
    "usage: qaudit run [OPTIONS] -- COMMAND [ARGS...]\n"
    "  --out PATTERN          the program's dump; %p pid, %n sequence (default " DEFAULT_OUT ");\n"
    "                         the dumps of the processes it starts go beside it; a directory\n"
    "                         (DIR/ makes it): " DEFAULT_OUT " inside it\n"
    "  --stacks MODE          off, sampled:N, sampled:Nb, always, fp or queue (default\n"
    "                         " DEFAULT_STACKS ": a stack for every allocation; sampled:65536b\n"
    "                         costs less: a stack per 64 KiB allocated, at random; queue when\n"
    "                         --sites is given)\n"
    "  --sites LIST           function patterns of queue code, e.g. rxq_grow_push,std::deque\n"
    "  --fail SPEC            nth=N, every=N or prob=P[,seed=S], then [,site=P][,size=A-B]\n"
    "  --poison[=all|queue]   fill new blocks and count bytes never written (default all)\n"
    "  --assert-depth1 MODE   report, abort or off (default report)\n"
    "  --interval S           also dump every S seconds\n"
    "  --timeline MS          memory-over-time points every MS ms, or off (default 100)\n"
    "  --preload PATH         the interposer (default: found next to qaudit or installed)\n"
    "Runs COMMAND under the interposer (with PYTHONMALLOC=malloc and USE_ZEND_ALLOC=0, unless\n"
    "set, so that Python's objects and PHP's values reach malloc), says its pid, forwards\n"
    "signals sent to qaudit, and exits with COMMAND's status (128+N when signal N ended it;\n"
    "127 not found, 126 not executable); qaudit's own errors exit 2.\n";

static pid_t child;

/* Signals sent to qaudit by another process go on to the program. A terminal's signals
 * (SI_KERNEL) already reached the whole process group: forwarding them would double them. */
static void forward_signal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    if (child > 0 && info->si_code <= 0)
        kill(child, sig);
}

static void install_forwarding(void)
{
    static const int forwarded[] = {SIGINT,  SIGTERM, SIGHUP,   SIGQUIT,
                                    SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};
    struct sigaction sa = {0};
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaction(forwarded[i], &sa, NULL);
}

static bool readable(const char *path)
{
    return access(path, R_OK) == 0;
}

/* The interposer beside this qaudit (build tree: bin/ and lib/), or where install put it. */
bool preload_find(char *out, size_t size)
{
    char self[PATH_MAX - 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash != NULL) {
            *slash = '\0';
            snprintf(out, size, "%s/../lib/libqaudit-preload.so", self);
            if (readable(out))
                return true;
            snprintf(out, size, "%s/libqaudit-preload.so", self);
            if (readable(out))
                return true;
        }
    }
    snprintf(out, size, "%s", QAUDIT_INSTALLED_PRELOAD);
    return readable(out);
}

bool stacks_mode_valid(const char *mode)
{
    static const char *const fixed[] = {"off", "always", "fp", "queue"};
    for (size_t i = 0; i < 4; i++)
        if (strcmp(mode, fixed[i]) == 0)
            return true;
    if (strncmp(mode, "sampled:", 8) != 0)
        return false;
    char *end;
    long n = strtol(mode + 8, &end, 10);
    return n > 0 && end != mode + 8 && (*end == '\0' || (end[0] == 'b' && end[1] == '\0'));
}

static bool valid_choice(const char *value, const char *const *choices, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(value, choices[i]) == 0)
            return true;
    return false;
}

struct run_settings {
    const char *out, *stacks, *sites, *fail, *poison, *assert_depth1, *interval, *timeline;
    const char *preload;
    char out_inside[PATH_MAX]; /* --out DIR: the default name inside DIR */
    int operand;               /* COMMAND */
};

/* A whole number in text (decimal or 0x hex, no sign), as the preload reads its settings. */
static bool whole_number(const char *text, unsigned long long max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    return errno == 0 && end != text && *end == '\0' && text[0] != '-' && v <= max;
}

/* QAUDIT_FAIL's grammar (interpose/src/config.c): nth=N | every=N | prob=P[,seed=S], then
 * optional ,site=PATTERN and ,size=MIN-MAX. */
static bool valid_fail(const char *spec)
{
    char copy[256];
    if (snprintf(copy, sizeof copy, "%s", spec) >= (int)sizeof copy)
        return false;
    bool mode = false;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *value = strchr(item, '=');
        if (value == NULL)
            return false;
        *value++ = '\0';
        if (strcmp(item, "nth") == 0 || strcmp(item, "every") == 0) {
            if (!whole_number(value, ULLONG_MAX) || strtoull(value, NULL, 0) == 0)
                return false;
            mode = true;
        } else if (strcmp(item, "prob") == 0) {
            char *end;
            double p = strtod(value, &end);
            if (*end != '\0' || end == value || !(p >= 0 && p <= 1))
                return false;
            mode = true;
        } else if (strcmp(item, "seed") == 0) {
            if (!whole_number(value, ULLONG_MAX))
                return false;
        } else if (strcmp(item, "size") == 0) {
            char *dash = strchr(value, '-');
            if (dash == NULL)
                return false;
            *dash = '\0';
            if (!whole_number(value, ULLONG_MAX) || !whole_number(dash + 1, ULLONG_MAX))
                return false;
        } else if (strcmp(item, "site") != 0 || *value == '\0') {
            return false;
        }
    }
    return mode;
}

static bool valid_poison(const char *value)
{
    const char *colon = strchr(value, ':');
    size_t name = colon ? (size_t)(colon - value) : strlen(value);
    bool known = (name == 3 && strncmp(value, "all", 3) == 0) ||
                 (name == 5 && strncmp(value, "queue", 5) == 0);
    return known && (colon == NULL || whole_number(colon + 1, 255));
}

/* The directory the dumps go to must exist and take new files, or the run would leave none. */
static const char *check_out_directory(const char *pattern)
{
    char dir[PATH_MAX];
    dump_path_directory(pattern, dir, sizeof dir);
    if (strchr(dir, '%') != NULL)
        return NULL; /* a directory named by pid or sequence is made by nobody: let the run say */
    static char problem[PATH_MAX + 64];
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(problem, sizeof problem, "--out: cannot write in %s: %s", dir, strerror(errno));
        return problem;
    }
    return NULL;
}

/* The stack mode when none is given: queue code named by --sites needs queue; a mode the
 * environment already sets is the user's; otherwise the sampled default. */
static void default_stacks(struct run_settings *s)
{
    if (s->stacks != NULL || getenv("QAUDIT_STACKS") != NULL)
        return;
    s->stacks = s->sites != NULL ? "queue" : DEFAULT_STACKS;
}

/* Checks every option before anything runs: a typo is an error here, not a silent default. */
static const char *check_settings(const struct run_settings *s)
{
    static const char *const depth1[] = {"report", "abort", "off"};
    if (s->stacks && !stacks_mode_valid(s->stacks))
        return "--stacks wants off, sampled:N, sampled:Nb, always, fp or queue";
    if (s->assert_depth1 && !valid_choice(s->assert_depth1, depth1, 3))
        return "--assert-depth1 wants report, abort or off";
    if (s->poison && !valid_poison(s->poison))
        return "--poison wants all or queue, optionally :N (a byte, e.g. :0xA5)";
    if (s->fail && !valid_fail(s->fail))
        return "--fail wants nth=N, every=N or prob=P[,seed=S], then optional ,site=PATTERN "
               ",size=MIN-MAX";
    if (s->interval && !whole_number(s->interval, 86400))
        return "--interval wants whole seconds from 0 (off) to 86400";
    if (s->timeline && strcmp(s->timeline, "off") != 0 && !whole_number(s->timeline, 3600000))
        return "--timeline wants milliseconds from 0 (off) to 3600000, or off";
    if (s->out && s->out[0] == '\0')
        return "--out wants a path pattern";
    return check_out_directory(s->out ? s->out : DEFAULT_OUT);
}

static void export_settings(const struct run_settings *s, const char *preload, const char *program)
{
    const char *existing = getenv("LD_PRELOAD");
    char shims[4 * PATH_MAX];
    allocator_shims(program, preload, shims, sizeof shims);
    char *value = NULL;
    if (asprintf(&value, "%s%s%s%s%s", preload, shims[0] ? ":" : "", shims,
                 existing && *existing ? ":" : "", existing ? existing : "") > 0)
        setenv("LD_PRELOAD", value, 1);
    free(value);
    const struct {
        const char *name, *value;
    } vars[] = {{"QAUDIT_OUT", s->out},           {"QAUDIT_STACKS", s->stacks},
                {"QAUDIT_QUEUE_SITES", s->sites}, {"QAUDIT_FAIL", s->fail},
                {"QAUDIT_POISON", s->poison},     {"QAUDIT_ASSERT_DEPTH1", s->assert_depth1},
                {"QAUDIT_INTERVAL", s->interval}, {"QAUDIT_TIMELINE", s->timeline}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (vars[i].value != NULL)
            setenv(vars[i].name, vars[i].value, 1);
}

static int wait_for_child(void)
{
    int status;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            return 2;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* --poison[=all|queue]: without a value, all. */
static bool run_poison(void *to, char *value)
{
    *(const char **)to = value ? value : "all";
    return true;
}

/* Stops at the first operand, so that COMMAND's own options stay COMMAND's. */
static bool parse_run_options(int argc, char **argv, struct run_settings *s)
{
    const struct option_spec specs[] = {
        {"out", 0, OPTION_VALUE, OPTION_STRING, &s->out, 0, NULL, "dump path pattern"},
        {"stacks", 0, OPTION_VALUE, OPTION_STRING, &s->stacks, 0, NULL, "stack mode"},
        {"sites", 0, OPTION_VALUE, OPTION_STRING, &s->sites, 0, NULL, "queue code patterns"},
        {"fail", 0, OPTION_VALUE, OPTION_STRING, &s->fail, 0, NULL, "fault injection"},
        {"poison", 0, OPTION_MAYBE_VALUE, OPTION_CALL, &s->poison, 0, run_poison, "fill blocks"},
        {"assert-depth1", 0, OPTION_VALUE, OPTION_STRING, &s->assert_depth1, 0, NULL, "mode"},
        {"interval", 0, OPTION_VALUE, OPTION_STRING, &s->interval, 0, NULL, "dump every S s"},
        {"preload", 0, OPTION_VALUE, OPTION_STRING, &s->preload, 0, NULL, "the interposer"},
        {"timeline", 0, OPTION_VALUE, OPTION_STRING, &s->timeline, 0, NULL, "points every MS"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {0}};
    const struct option_table table = {"run", run_usage, true, specs};
    int parsed = option_parse(&table, argc, argv, &s->operand);
    if (parsed == 0)
        exit(0); /* --help */
    return parsed == OPTIONS_PARSED;
}

/* Interpreters whose own allocator keeps their objects from malloc, and the variable that sends
 * them there. Python's pymalloc serves objects of up to 512 bytes from arenas it maps itself;
 * PHP's Zend allocator serves every value from 2 MiB chunks it maps itself; no interposed call
 * sees either. The variable is set for every program (a script may start the interpreter), a
 * value the user set is kept, and either is said when the program is that interpreter. */
static const struct interpreter_allocator {
    const char *variable, *value, *name, *objects, *kept;
} interpreter_allocators[] = {
    {"PYTHONMALLOC", "malloc", "python", "Python's objects",
     "with pymalloc, Python's objects of 512 bytes or less are not counted"},
    {"USE_ZEND_ALLOC", "0", "php", "PHP's values",
     "with the Zend allocator, PHP's values are not counted"},
};

/* Whether program is the interpreter called name (its file name starts so), or a script whose
 * #! line names it. */
static bool runs_interpreter(const char *program, const char *name)
{
    const char *base = strrchr(program, '/');
    if (strncmp(base ? base + 1 : program, name, strlen(name)) == 0)
        return true;
    char line[256] = "";
    FILE *f = strchr(program, '/') ? fopen(program, "r") : NULL;
    if (f != NULL) {
        if (fgets(line, sizeof line, f) == NULL)
            line[0] = '\0';
        fclose(f);
    }
    return strncmp(line, "#!", 2) == 0 && strstr(line, name) != NULL;
}

static void interpreters_to_malloc(const char *program)
{
    for (size_t i = 0; i < sizeof interpreter_allocators / sizeof interpreter_allocators[0]; i++) {
        const struct interpreter_allocator *a = &interpreter_allocators[i];
        const char *set = getenv(a->variable);
        bool said = runs_interpreter(program, a->name);
        if (set == NULL) {
            setenv(a->variable, a->value, 1);
            if (said)
                fprintf(stderr, "qaudit run: %s=%s, so that %s reach malloc and are counted\n",
                        a->variable, a->value, a->objects);
        } else if (said && strncmp(set, a->value, strlen(a->value)) == 0) { /* malloc_debug */
            fprintf(stderr, "qaudit run: %s=%s kept as set: %s reach malloc and are counted\n",
                    a->variable, set, a->objects);
        } else if (said) {
            fprintf(stderr, "qaudit run: %s=%s kept as set; %s\n", a->variable, set, a->kept);
        }
    }
}

/* Starts the program; its pid, or -1 after one line saying why (*status: 127 not found, 126
 * not executable, 2 no fork). The child tells an exec failure through a pipe that a successful
 * exec closes, so that only one line is said and no dump is looked for. */
static pid_t start_program(char **argv, int *status)
{
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        fprintf(stderr, "qaudit run: pipe: %s\n", strerror(errno));
        *status = 2;
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(report[0]);
        /* This process, in its last image, is the one whose dump takes --out's own name. */
        char self[24];
        snprintf(self, sizeof self, "%d", (int)getpid());
        setenv("QAUDIT_PROGRAM_PID", self, 1);
        execvp(argv[0], argv);
        int failure = errno;
        (void)!write(report[1], &failure, sizeof failure);
        _exit(127);
    }
    child = pid > 0 ? pid : 0; /* signals sent to qaudit from now on go to the program */
    close(report[1]);
    int failure = 0;
    ssize_t got = 0;
    if (pid > 0)
        while ((got = read(report[0], &failure, sizeof failure)) < 0 && errno == EINTR)
            ;
    close(report[0]);
    if (pid < 0 || got == (ssize_t)sizeof failure) {
        int why = pid < 0 ? errno : failure;
        fprintf(stderr, "qaudit run: cannot %s %s: %s\n", pid < 0 ? "fork for" : "run", argv[0],
                strerror(why));
        if (pid > 0)
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        *status = pid < 0 ? 2 : why == ENOENT ? 127 : 126;
        child = 0;
        return -1;
    }
    fprintf(stderr, "qaudit run: pid %d: %s\n", (int)pid, argv[0]);
    return pid;
}

int command_run(int argc, char **argv)
{
    struct run_settings s = {0};
    if (!parse_run_options(argc, argv, &s))
        return 2;
    if (s.operand >= argc)
        return usage_error("run", "no COMMAND after the options (qaudit run -- COMMAND ...)");
    default_stacks(&s);
    const char *problem =
        s.out && s.out[0] ? run_out_resolve(s.out, s.out_inside, sizeof s.out_inside, DEFAULT_OUT)
                          : NULL;
    if (problem == NULL && s.out && s.out[0])
        s.out = s.out_inside;
    if (problem == NULL)
        problem = check_settings(&s);
    if (problem != NULL) {
        fprintf(stderr, "qaudit run: %s\n", problem);
        return 2;
    }
    char preload[PATH_MAX];
    if (s.preload != NULL)
        snprintf(preload, sizeof preload, "%s", s.preload);
    if (s.preload != NULL ? !readable(preload) : !preload_find(preload, sizeof preload)) {
        fprintf(stderr, "qaudit run: cannot find libqaudit-preload.so (looked beside qaudit and "
                        "at " QAUDIT_INSTALLED_PRELOAD "); pass --preload PATH\n");
        return 2;
    }
    char why[PATH_MAX + 256];
    if (program_unreachable(argv[s.operand], why, sizeof why)) {
        fprintf(stderr, "qaudit run: %s\n", why);
        return 2;
    }
    char absolute[PATH_MAX];
    if (realpath(preload, absolute) != NULL)
        snprintf(preload, sizeof preload, "%s", absolute);
    export_settings(&s, preload, argv[s.operand]);
    interpreters_to_malloc(argv[s.operand]);
    run_fallback_prepare();
    install_forwarding();
    int status = 0;
    if (start_program(argv + s.operand, &status) < 0)
        return status;
    status = wait_for_child();
    size_t left = run_fallback_collect(s.out ? s.out : DEFAULT_OUT);
    /* A run that left no evidence is not a success, whatever the program's own status. */
    if (!run_summary(s.out ? s.out : DEFAULT_OUT, child, status, argv[s.operand], left) &&
        status == 0)
        return 2;
    return status;
}
