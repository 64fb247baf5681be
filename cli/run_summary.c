/* What qaudit run says after the program ended: where its dump is, what it holds, the queue
 * verdict when the program reported queue operations, how many dumps the processes it started
 * wrote, and the command that shows it all. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reports/render.h"
#include "reports/report.h"

static const char *check_word(const struct report *r, const char *name)
{
    for (size_t i = 0; i < r->check_count; i++)
        if (strcmp(r->checks[i].name, name) == 0) {
            static const char *const words[] = {"PASS", "FAIL", "N/A"};
            return words[report_check_status(&r->checks[i])];
        }
    return "-";
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

/* How many dumps the processes the program started wrote. */
static void others_line(const struct run_dumps *others)
{
    if (others->started == 0)
        return;
    char count[64];
    bool one = others->started == 1;
    fprintf(stderr,
            "qaudit run: %s more dump%s from the process%s it started (forks, execs); the "
            "figures above are its own\n",
            report_count_text(count, sizeof count, others->started), one ? "" : "s",
            one ? "" : "es");
}

/* The command takes the dumps of the processes the program started too: the pattern's glob when
 * it names this run's dumps only, else the run's dumps by name (a few) or picked by their run id
 * (more), so that another run's dumps are never merged in. */
#define NAMED_AT_MOST 8

static void next_command(const char *own, const struct run_dumps *others)
{
    if (others->started == 0) { /* the program's own snapshots: its newest dump supersedes them */
        fprintf(stderr, "qaudit run: next: qaudit report %s\n", own);
        return;
    }
    if (!others->mixed) {
        fprintf(stderr, "qaudit run: next: qaudit report %s\n", others->glob);
        return;
    }
    if (others->count + 1 > NAMED_AT_MOST) {
        fprintf(stderr, "qaudit run: next: qaudit report $(grep -l '%s' %s)\n", others->needle,
                others->glob);
        return;
    }
    fprintf(stderr, "qaudit run: next: qaudit report %s", own);
    for (size_t i = 0; i < others->count; i++)
        fprintf(stderr, " %s", others->paths[i]);
    fputc('\n', stderr);
}

/* The run's processes that outlived the program (a daemon that detached): their dumps come when
 * they end; a snapshot takes one now. Said before the next command, which stays the last line. */
#define SURVIVORS_NAMED 4

static void survivors_line(const char *run_id)
{
    pid_t pids[SURVIVORS_NAMED];
    size_t n = run_survivors(run_id, pids, SURVIVORS_NAMED);
    if (n == 0)
        return;
    if (n == 1) {
        fprintf(stderr,
                "qaudit run: a process it started is still running, pid %d: its dump comes when "
                "it ends (qaudit snapshot %d takes one now)\n",
                (int)pids[0], (int)pids[0]);
        return;
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
}

/* A Go program ends with the exit_group system call, past exit(): its last dump is missing. */
static const char go_ending[] = "a Go program ends with the exit_group system call, past exit() "
                                "where the preload writes its last dump; qaudit snapshot PID or "
                                "--interval S takes dumps while it runs";

bool run_summary(const char *pattern, pid_t pid, int status, const char *program)
{
    char path[4096], error[512];
    bool go = program_is_go(program);
    if (!dump_path_newest(pattern, pid, path, sizeof path)) {
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
    fprintf(stderr, "qaudit run: dump %s (%s)\n", path, r.processes[0].reason);
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
    const char *run_id = getenv("QAUDIT_RUN_ID");
    if (run_id != NULL)
        run_dumps_find(pattern, path, pid, run_id, &others);
    others_line(&others);
    if (run_id != NULL)
        survivors_line(run_id);
    next_command(path, &others);
    run_dumps_free(&others);
    return true;
}
