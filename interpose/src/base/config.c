/* QAUDIT_* environment variables, read once at initialisation without allocating. A value that
 * does not parse is reported on stderr and replaced by the default: a typo must not take the
 * audited process down.
 * Context: start-up only (entry/start.c), before counting starts; the settings are read-only
 * after it, read in every context. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base.h"

struct qa_config qa_cfg;

static void copy(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static bool parse_u64(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-')
        return false;
    *out = v;
    return true;
}

static void bad(const char *name, const char *value, const char *expected)
{
    qa_log("%s=%s: expected %s; using the default", name, value, expected);
}

static void load_stacks(const char *v)
{
    qa_cfg.stacks = QA_STACKS_QUEUE;
    if (v == NULL)
        return;
    if (strcmp(v, "off") == 0)
        qa_cfg.stacks = QA_STACKS_OFF;
    else if (strcmp(v, "always") == 0)
        qa_cfg.stacks = QA_STACKS_ALWAYS;
    else if (strcmp(v, "fp") == 0)
        qa_cfg.stacks = QA_STACKS_FP;
    else if (strcmp(v, "queue") == 0)
        qa_cfg.stacks = QA_STACKS_QUEUE;
    else if (strncmp(v, "sampled:", 8) == 0) {
        char number[32];
        copy(number, sizeof number, v + 8);
        size_t len = strlen(number);
        qa_cfg.sample_by_bytes = len > 0 && (number[len - 1] == 'b' || number[len - 1] == 'B');
        if (qa_cfg.sample_by_bytes)
            number[len - 1] = '\0';
        /* Counted down in a signed 64-bit word: 2^62 leaves room for any one allocation. */
        if (parse_u64(number, &qa_cfg.sample_every) && qa_cfg.sample_every > 0 &&
            qa_cfg.sample_every <= (1ull << 62))
            qa_cfg.stacks = QA_STACKS_SAMPLED;
        else
            bad("QAUDIT_STACKS", v,
                "sampled:N (every Nth allocation) or sampled:Nb (per N bytes), N from 1 to 2^62");
    } else
        bad("QAUDIT_STACKS", v, "off, sampled:N, sampled:Nb, always, fp or queue");
}

static void load_signal(const char *v)
{
    qa_cfg.signal = SIGUSR2;
    if (v == NULL)
        return;
    qa_cfg.signal_explicit = true;
    static const struct {
        const char *name;
        int number;
    } names[] = {{"USR1", SIGUSR1},    {"USR2", SIGUSR2}, {"SIGUSR1", SIGUSR1},
                 {"SIGUSR2", SIGUSR2}, {"off", 0},        {"0", 0}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(v, names[i].name) == 0) {
            qa_cfg.signal = names[i].number;
            return;
        }
    uint64_t n;
    if (parse_u64(v, &n) && n >= 1 && n < 65 && n != SIGKILL && n != SIGSTOP)
        qa_cfg.signal = (int)n;
    else
        bad("QAUDIT_SIGNAL", v, "USR1, USR2, a signal number, or off");
}

/* QAUDIT_FAIL: nth=N | every=N | prob=P[,seed=S], then optional ,site=PATTERN and ,size=A-B */
static void load_fail(const char *v)
{
    qa_cfg.fail_mode = QA_FAIL_NONE;
    qa_cfg.fail_size_max = UINT64_MAX;
    if (v == NULL || *v == '\0')
        return;
    char spec[256];
    copy(spec, sizeof spec, v);
    char *save = NULL;
    for (char *item = strtok_r(spec, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (eq == NULL)
            goto invalid;
        *eq = '\0';
        const char *key = item, *value = eq + 1;
        if (strcmp(key, "nth") == 0 || strcmp(key, "every") == 0) {
            if (!parse_u64(value, &qa_cfg.fail_n) || qa_cfg.fail_n == 0)
                goto invalid;
            qa_cfg.fail_mode = key[0] == 'n' ? QA_FAIL_NTH : QA_FAIL_EVERY;
        } else if (strcmp(key, "prob") == 0) {
            char *end;
            qa_cfg.fail_probability = strtod(value, &end);
            if (*end != '\0' || !(qa_cfg.fail_probability >= 0 && qa_cfg.fail_probability <= 1))
                goto invalid;
            qa_cfg.fail_mode = QA_FAIL_PROBABILITY;
        } else if (strcmp(key, "seed") == 0) {
            if (!parse_u64(value, &qa_cfg.fail_seed))
                goto invalid;
        } else if (strcmp(key, "site") == 0) {
            copy(qa_cfg.fail_site, sizeof qa_cfg.fail_site, value);
        } else if (strcmp(key, "size") == 0) {
            char range[64];
            copy(range, sizeof range, value);
            char *dash = strchr(range, '-');
            if (dash == NULL)
                goto invalid;
            *dash = '\0';
            if (!parse_u64(range, &qa_cfg.fail_size_min) ||
                !parse_u64(dash + 1, &qa_cfg.fail_size_max))
                goto invalid;
        } else {
            goto invalid;
        }
    }
    if (qa_cfg.fail_mode != QA_FAIL_NONE)
        return;
invalid:
    qa_cfg.fail_mode = QA_FAIL_NONE;
    bad("QAUDIT_FAIL", v, "nth=N, every=N or prob=P[,seed=S], then [,site=PATTERN][,size=MIN-MAX]");
}

static void load_poison(const char *v)
{
    qa_cfg.poison = QA_POISON_OFF;
    qa_cfg.poison_byte = 0xA5;
    if (v == NULL || strcmp(v, "off") == 0 || strcmp(v, "0") == 0)
        return;
    char spec[64];
    copy(spec, sizeof spec, v);
    char *colon = strchr(spec, ':');
    uint64_t byte = 0xA5;
    if (colon) {
        *colon = '\0';
        if (!parse_u64(colon + 1, &byte) || byte > 255) {
            bad("QAUDIT_POISON", v, "all or queue, optionally :0xNN");
            return;
        }
    }
    if (strcmp(spec, "all") == 0 || strcmp(spec, "1") == 0)
        qa_cfg.poison = QA_POISON_ALL;
    else if (strcmp(spec, "queue") == 0)
        qa_cfg.poison = QA_POISON_QUEUE;
    else {
        bad("QAUDIT_POISON", v, "all or queue, optionally :0xNN");
        return;
    }
    qa_cfg.poison_byte = (unsigned char)byte;
}

/* Whether QAUDIT_OUT was unset or relative, and made absolute here (qa_config_export). */
static bool out_made_absolute;

/* QAUDIT_OUT, made absolute against the working directory at start-up: a daemon that changes
 * directory still writes where it was asked to, and `qaudit snapshot` reads the full path. */
static void load_out(const char *v)
{
    const char *pattern = v && *v ? v : "qaudit-%p.json";
    out_made_absolute = pattern[0] != '/';
    char cwd[sizeof qa_cfg.out_pattern];
    if (pattern[0] == '/' || getcwd(cwd, sizeof cwd) == NULL) {
        copy(qa_cfg.out_pattern, sizeof qa_cfg.out_pattern, pattern);
        return;
    }
    size_t n = strlen(cwd);
    if (n + 1 + strlen(pattern) >= sizeof qa_cfg.out_pattern) {
        copy(qa_cfg.out_pattern, sizeof qa_cfg.out_pattern, pattern);
        return;
    }
    cwd[n] = '/';
    copy(cwd + n + 1, sizeof cwd - n - 1, pattern);
    copy(qa_cfg.out_pattern, sizeof qa_cfg.out_pattern, cwd);
}

/* QAUDIT_FALLBACK_DIR: an absolute directory, /tmp when unset or not absolute. */
static void load_fallback(const char *v)
{
    if (v != NULL && v[0] == '/' && strlen(v) < sizeof qa_cfg.fallback_dir)
        copy(qa_cfg.fallback_dir, sizeof qa_cfg.fallback_dir, v);
    else {
        if (v != NULL)
            bad("QAUDIT_FALLBACK_DIR", v, "an absolute directory");
        copy(qa_cfg.fallback_dir, sizeof qa_cfg.fallback_dir, "/tmp");
    }
}

/* QAUDIT_RUN_ID: letters, digits, '-' and '_' only (it goes into file names). */
static void load_run_id(const char *v)
{
    qa_cfg.run_id[0] = '\0';
    if (v == NULL)
        return;
    size_t n = strlen(v);
    bool plain = n > 0 && n < sizeof qa_cfg.run_id;
    for (size_t i = 0; plain && i < n; i++)
        plain = (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
                (v[i] >= '0' && v[i] <= '9') || v[i] == '-' || v[i] == '_';
    if (plain)
        copy(qa_cfg.run_id, sizeof qa_cfg.run_id, v);
    else
        bad("QAUDIT_RUN_ID", v, "1 to 32 letters, digits, '-' or '_'");
}

/* QAUDIT_PROGRAM_PID: the pid of the process qaudit run started, whose last image takes the
 * dump's own name (output/dump_file.c); 0 when unset. */
static void load_program_pid(const char *v)
{
    uint64_t n;
    qa_cfg.program_pid = 0;
    if (v == NULL)
        return;
    if (parse_u64(v, &n) && n >= 1 && n <= INT32_MAX)
        qa_cfg.program_pid = (int)n;
    else
        bad("QAUDIT_PROGRAM_PID", v, "a process id");
}

/* qaudit attach passes the settings in a block of NAME=VALUE strings, each ended by a NUL, the
 * block by an empty one (an environment block), copied here: the attached program's own
 * environment is neither read nor changed. NULL: the environment (started under the preload). */
static const char *given;
static char given_copy[8192];

static const char *setting(const char *name)
{
    if (given == NULL)
        return getenv(name);
    size_t n = strlen(name);
    for (const char *p = given; *p != '\0'; p += strlen(p) + 1)
        if (strncmp(p, name, n) == 0 && p[n] == '=')
            return p + n + 1;
    return NULL;
}

static void keep_given(const char *block)
{
    size_t used = 0;
    while (block[used] != '\0' && used < sizeof given_copy - 2)
        used += strnlen(block + used, sizeof given_copy - 2 - used) + 1;
    if (used > sizeof given_copy - 2)
        used = sizeof given_copy - 2;
    memcpy(given_copy, block, used);
    given_copy[used] = given_copy[used + 1] = '\0';
    given = given_copy;
}

void qa_config_load_given(const char *block)
{
    keep_given(block);
    qa_config_load();
    if (setting("QAUDIT_STACKS") == NULL) /* qaudit attach's default */
        qa_cfg.stacks = QA_STACKS_ALWAYS;
}

/* A later attach of a preload that stayed loaded: its --out holds from now on (a second attach's
 * dumps went to the first one's directory); the rest stays as the first attach set it up (the
 * records were made for its stacks mode). Whether the stacks mode asked differs: true. */
bool qa_config_reload_given(const char *block)
{
    keep_given(block);
    load_out(setting("QAUDIT_OUT"));
    if (setting("QAUDIT_STACKS") == NULL)
        return false;
    enum qa_stacks stacks = qa_cfg.stacks;
    uint64_t every = qa_cfg.sample_every;
    bool by_bytes = qa_cfg.sample_by_bytes;
    load_stacks(setting("QAUDIT_STACKS"));
    bool differs = qa_cfg.stacks != stacks ||
                   (stacks == QA_STACKS_SAMPLED &&
                    (qa_cfg.sample_every != every || qa_cfg.sample_by_bytes != by_bytes));
    qa_cfg.stacks = stacks;
    qa_cfg.sample_every = every;
    qa_cfg.sample_by_bytes = by_bytes;
    return differs;
}

void qa_config_load(void)
{
    const char *v;
    load_out(setting("QAUDIT_OUT"));
    load_fallback(setting("QAUDIT_FALLBACK_DIR"));
    load_run_id(setting("QAUDIT_RUN_ID"));
    load_program_pid(setting("QAUDIT_PROGRAM_PID"));
    load_stacks(setting("QAUDIT_STACKS"));
    qa_cfg.depth = 32;
    uint64_t n;
    if ((v = setting("QAUDIT_STACK_DEPTH")) != NULL) {
        if (parse_u64(v, &n) && n >= 1 && n <= QA_MAX_DEPTH)
            qa_cfg.depth = (unsigned)n;
        else
            bad("QAUDIT_STACK_DEPTH", v, "1 to 64");
    }
    load_signal(setting("QAUDIT_SIGNAL"));
    if ((v = setting("QAUDIT_INTERVAL")) != NULL) {
        if (parse_u64(v, &n) && n <= 86400)
            qa_cfg.interval = (unsigned)n;
        else
            bad("QAUDIT_INTERVAL", v, "seconds from 0 (off) to 86400");
    }
    qa_cfg.timeline_ms = 100;
    if ((v = setting("QAUDIT_TIMELINE")) != NULL) {
        if (strcmp(v, "off") == 0)
            qa_cfg.timeline_ms = 0;
        else if (parse_u64(v, &n) && n <= 3600000)
            qa_cfg.timeline_ms = (unsigned)n;
        else
            bad("QAUDIT_TIMELINE", v, "milliseconds from 0 (off) to 3600000, or off");
    }
    if ((v = setting("QAUDIT_SEED")) != NULL) {
        if (parse_u64(v, &qa_cfg.seed) && qa_cfg.seed < (1ull << 53))
            qa_cfg.seed_set = true;
        else
            bad("QAUDIT_SEED", v, "a whole number below 2^53");
    }
    if ((v = setting("QAUDIT_UNWIND_CHECK")) != NULL) {
        qa_cfg.unwind_check = strcmp(v, "1") == 0;
        if (!qa_cfg.unwind_check && strcmp(v, "0") != 0)
            bad("QAUDIT_UNWIND_CHECK", v, "1 or 0");
    }
    copy(qa_cfg.sites, sizeof qa_cfg.sites, (v = setting("QAUDIT_QUEUE_SITES")) ? v : "");
    /* The process's own variable, attached or not (only read): whether a Python's objects reach
     * malloc is the program's setting, not qaudit's. */
    copy(qa_cfg.pythonmalloc, sizeof qa_cfg.pythonmalloc, (v = getenv("PYTHONMALLOC")) ? v : "");
    load_fail(setting("QAUDIT_FAIL"));
    load_poison(setting("QAUDIT_POISON"));
    qa_cfg.assert_depth1 = QA_ASSERT_REPORT;
    if ((v = setting("QAUDIT_ASSERT_DEPTH1")) != NULL) {
        if (strcmp(v, "abort") == 0)
            qa_cfg.assert_depth1 = QA_ASSERT_ABORT;
        else if (strcmp(v, "off") == 0)
            qa_cfg.assert_depth1 = QA_ASSERT_OFF;
        else if (strcmp(v, "report") != 0)
            bad("QAUDIT_ASSERT_DEPTH1", v, "report, abort or off");
    }
    /* Exec'd children inherit LD_PRELOAD (and so qaudit) unless QAUDIT_FOLLOW_EXEC=0. */
    qa_cfg.follow_exec = true;
    if ((v = setting("QAUDIT_FOLLOW_EXEC")) != NULL && strcmp(v, "0") == 0) {
        qa_cfg.follow_exec = false;
        if (given == NULL) /* an attached process's environment is the program's own */
            unsetenv("LD_PRELOAD");
    }
}

/* The absolute pattern goes back into the environment, so that a program this one executes
 * (pg_ctl's postgres, a shell's commands) writes where this one does, not into its own working
 * directory. Called under the re-entrancy guard once ready: setenv's allocation is not the
 * program's. */
void qa_config_export(void)
{
    if (given == NULL && out_made_absolute && qa_cfg.follow_exec && qa_cfg.out_pattern[0] == '/')
        setenv("QAUDIT_OUT", qa_cfg.out_pattern, 1);
}
