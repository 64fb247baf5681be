/* What qaudit run says after the program ended: where its dump is, what it holds, the queue
 * verdict when the program reported queue operations, how many dumps the processes it started
 * wrote, and the command that shows it all. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reports/render.h"
#include "reports/report.h"

static const char *check_word(const struct report *r, const char *name)
{
    static const char *const words[] = {"PASS", "FAIL", "N/A"};
    const struct report_check *check = report_check_named(r, name);
    return check ? words[report_check_status(check)] : "-";
}

/* The queue checks, for a queue audit only. */
static void queue_line(const struct report *r)
{
    char connections[64];
    fprintf(stderr,
            "qaudit run: depth_one_no_alloc %s, conservation %s, connections_closed %s; %s "
            "connections\n",
            check_word(r, "depth_one_no_alloc"), check_word(r, "conservation"),
            check_word(r, "connections_closed"),
            report_count_text(connections, sizeof connections, r->queues.opened));
}

/* How many dumps the processes the program started wrote, and its own images before its last
 * exec (a shim's, a script's). */
static void others_line(const struct run_dumps *others)
{
    size_t earlier = others->count - others->started - others->own_image;
    if (others->started == 0 && earlier == 0)
        return;
    char count[64], images[128] = "";
    if (earlier > 0)
        snprintf(images, sizeof images, ", %zu from its image%s before its last exec", earlier,
                 earlier == 1 ? "" : "s");
    bool one = others->started == 1;
    if (others->started == 0)
        fprintf(stderr,
                "qaudit run: %zu more dump%s from its image%s before its last exec; the figures "
                "above are its last image's\n",
                earlier, earlier == 1 ? "" : "s", earlier == 1 ? "" : "s");
    else
        fprintf(stderr,
                "qaudit run: %s more dump%s from the process%s it started (forks, execs)%s; the "
                "figures above are its own\n",
                report_count_text(count, sizeof count, others->started), one ? "" : "s",
                one ? "" : "es", images);
}

/* text as one shell word: as it is when it holds nothing a shell reads (and quoted is false),
 * else in single quotes. */
static void shell_word(const char *text, bool quoted, char *out, size_t size)
{
    if (!quoted && text[0] != '\0' &&
        strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+:,@=") ==
            strlen(text)) {
        snprintf(out, size, "%s", text);
        return;
    }
    size_t used = 0;
    out[used++] = '\'';
    for (const char *c = text; *c != '\0' && used + 6 < size; c++) {
        if (*c == '\'') {
            memcpy(out + used, "'\\''", 4);
            used += 4;
        } else {
            out[used++] = *c;
        }
    }
    out[used++] = '\'';
    out[used] = '\0';
}

/* Whether every dump in dir is of the run. */
static bool directory_only_run(const char *dir, const char *run_id)
{
    struct dump_list list = {0};
    char error[512];
    bool only = expand_dumps(dir, &list, error, sizeof error);
    for (size_t i = 0; only && i < list.count; i++)
        only = strcmp(list.entries[i].run_id, run_id) == 0;
    dump_list_free(&list);
    return only;
}

/* The command that reports the whole run, the last line: the program's dump alone when the run
 * left nothing else (but its snapshots, which that dump supersedes); else the directory of the
 * pattern, which report reads whole (the dumps among its files, and those of their runs in the
 * fallback directory, a daemon's later ones included), narrowed with --run when it also holds other
 * runs' dumps (the default pattern's case). A directory named by pid or sequence is a quoted glob.
 */
static void next_command(const char *pattern, const char *own, const struct run_dumps *others,
                         bool more_coming, const char *run_id)
{
    char word[8400];
    if (others->count == others->own_image && !more_coming) {
        shell_word(own, false, word, sizeof word);
        fprintf(stderr, "qaudit run: next: qaudit report %s\n", word);
        return;
    }
    char dir[4096];
    dump_path_directory(pattern, dir, sizeof dir);
    bool named = strchr(dir, '%') != NULL;
    if (named) {
        char glob[4096];
        dump_path_expand(dir, -1, -1, glob, sizeof glob);
        snprintf(dir, sizeof dir, "%s", glob);
    }
    bool only = !named && directory_only_run(dir, run_id);
    shell_word(dir, named, word, sizeof word); /* a glob is report's to expand */
    fprintf(stderr, "qaudit run: next: qaudit report %s%s%s\n", word, only ? "" : " --run ",
            only ? "" : run_id);
}

/* The run's processes that outlived the program (a daemon that detached): their dumps come when
 * they end; a snapshot takes one now. Said before the next command, which stays the last line. */
#define SURVIVORS_NAMED 4

static size_t survivors_line(const char *run_id)
{
    pid_t pids[SURVIVORS_NAMED];
    size_t n = run_survivors(run_id, pids, SURVIVORS_NAMED);
    if (n == 0)
        return 0;
    if (n == 1) {
        fprintf(stderr,
                "qaudit run: a process it started is still running, pid %d: its dump comes when "
                "it ends (qaudit snapshot %d takes one now)\n",
                (int)pids[0], (int)pids[0]);
        return n;
    }
    char list[128] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && i < SURVIVORS_NAMED; i++)
        used +=
            (size_t)snprintf(list + used, sizeof list - used, "%s%d", i ? ", " : "", (int)pids[i]);
    fprintf(stderr,
            "qaudit run: %zu processes it started are still running, pids %s%s: their dumps come "
            "when they end (qaudit snapshot PID takes one now)\n",
            n, list, n > SURVIVORS_NAMED ? ", ..." : "");
    return n;
}

/* A Go program ends with the exit_group system call, past exit(): its last dump is missing. */
static const char go_ending[] = "a Go program ends with the exit_group system call, past exit() "
                                "where the preload writes its last dump; qaudit snapshot PID or "
                                "--interval S takes dumps while it runs";

/* The dump's line: its path and reason, and the executable when it is not the command's own (a
 * shim or a script that exec'd a program: its last image's dump is the one here). */
static void dump_line(const char *path, const struct report_process *p, const char *program)
{
    char resolved[4096], real[4096];
    bool same = program_resolve(program, resolved, sizeof resolved) &&
                realpath(resolved, real) != NULL && strcmp(real, p->exe) == 0;
    if (same || p->exe[0] == '\0')
        fprintf(stderr, "qaudit run: dump %s (%s)\n", path, p->reason);
    else if (strcmp(p->reason, "exec") == 0) /* the image after it left none (SIGKILL) */
        fprintf(stderr, "qaudit run: dump %s (%s), of the image %s\n", path, p->reason, p->exe);
    else
        fprintf(stderr, "qaudit run: dump %s (%s), the program's last image: %s\n", path, p->reason,
                p->exe);
}

bool run_summary(const char *pattern, pid_t pid, int status, const char *program,
                 size_t fallback_left)
{
    char path[4096], error[512];
    bool go = program_is_go(program);
    const char *run_id = getenv("QAUDIT_RUN_ID");
    if (run_id == NULL)
        run_id = "";
    if (!dump_path_program(pattern, pid, run_id, path, sizeof path)) {
        dump_path_expand(pattern, pid, -1, path, sizeof path);
        fprintf(stderr, "qaudit run: no dump at %s (%s)\n", path,
                status == 128 + SIGKILL
                    ? "the program was killed by SIGKILL, which no handler can catch"
                : go ? go_ending
                     : "when the preload could not write it, it said why on stderr in a line "
                       "starting with qaudit:; a program that ends with the exit_group system "
                       "call itself leaves none");
        return false;
    }
    struct report r = {0};
    const char *one = path;
    if (report_load(&one, 1, &r, error, sizeof error) != REPORT_OK) {
        fprintf(stderr, "qaudit run: dump %s\nqaudit run: %s\n", path, error);
        return true;
    }
    const struct report_totals *t = &r.totals;
    char allocs[64], frees[64], requested[64], peak[64], live[64], blocks[64], sites[64];
    dump_line(path, &r.processes[0], program);
    if (go && !r.processes[0].final)
        fprintf(stderr, "qaudit run: the program's end is not in it: %s\n", go_ending);
    fprintf(stderr, "qaudit run: %s allocations, %s frees, %s requested, peak live %s\n",
            report_count_text(allocs, sizeof allocs, t->allocs),
            report_count_text(frees, sizeof frees, t->frees),
            report_bytes_text(requested, sizeof requested, t->bytes_requested),
            report_bytes_text(peak, sizeof peak, t->peak_live_bytes));
    fprintf(stderr, "qaudit run: %s in %s block%s %s; %s site%s\n",
            report_bytes_text(live, sizeof live, t->live_bytes),
            report_count_text(blocks, sizeof blocks, t->live_blocks),
            t->live_blocks == 1 ? "" : "s",
            r.processes[0].final ? "live at exit" : "live at the dump",
            report_count_text(sites, sizeof sites, r.site_count), r.site_count == 1 ? "" : "s");
    if (report_queue_audit(&r))
        queue_line(&r);
    report_free(&r);
    struct run_dumps others = {0};
    run_dumps_find(pattern, path, pid, run_id, &others);
    others_line(&others);
    size_t survivors = run_id[0] != '\0' ? survivors_line(run_id) : 0;
    next_command(pattern, path, &others, survivors + fallback_left > 0, run_id);
    run_dumps_free(&others);
    return true;
}
