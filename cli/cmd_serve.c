/* qaudit serve: the daemon Prometheus, Pyroscope and Parca scrape (serve/, docs/design.md,
 * "Serve"). This file parses its options and lends serve/ the reading and writing of control
 * records (preload_control.c), as `qaudit snapshot` does them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "option_parse.h"
#include "qaudit/control.h"
#include "serve/serve.h"

static const char serve_usage[] =
    "usage: qaudit serve [--listen HOST:PORT] [--token-file FILE] [--timeout MS]\n"
    "                    [--min-interval MS] [--max-targets N] [--state-dir DIR]\n"
    "  Serves the allocation counts of every process on this host that carries\n"
    "  libqaudit-preload.so (found as qaudit snapshot finds one; new ones appear, ended ones\n"
    "  disappear) to the engines that scrape them, until SIGINT or SIGTERM:\n"
    "    GET /metrics                   Prometheus text exposition (OpenMetrics when asked)\n"
    "    GET /targets                   http_sd targets, one per process, with its labels\n"
    "    GET /debug/pprof/heap?pid=N    gzipped profile.proto (inuse_space by default)\n"
    "    GET /debug/pprof/allocs?pid=N  the same, alloc_space by default\n"
    "    ...&seconds=S                  what changed over S seconds (1 to 300): a delta,\n"
    "                                   as Go's net/http/pprof serves it\n"
    "  A scrape asks each process for a dump (as qaudit snapshot does), at most one per\n"
    "  --min-interval (default 1000 ms), moved out of its dump directory into the state\n"
    "  directory at once. A process whose dump does not come within --timeout (default\n"
    "  2000 ms, less when Prometheus' own scrape timeout is shorter) gets 503, the others are\n"
    "  still served. A forked child whose dump thread has not started (a prefork server's idle\n"
    "  worker) gets it started once through ptrace, as qaudit snapshot starts it.\n"
    "  --listen HOST:PORT  numeric address (default 127.0.0.1:9464; port 0: any free one)\n"
    "  --token-file FILE   a bearer token (its first line) every request must carry;\n"
    "                      needed beyond loopback; the file must be its owner's alone\n"
    "  --max-targets N     processes followed at most (default 1024)\n"
    "  --state-dir DIR     where scrapes' dumps are read (default: a new one in $TMPDIR,\n"
    "                      removed at exit)\n"
    "  Exit 0 at SIGINT or SIGTERM; 2: bad usage, the address cannot be bound, the token file\n"
    "  cannot be used.\n";

#define IMAGES 8

struct handle {
    struct preload_image image;
};

/* The preload image of pid whose record this qaudit reads and speaks for pid. */
static void *open_record(pid_t pid)
{
    struct preload_image *images = malloc(IMAGES * sizeof *images);
    struct qaudit_control c;
    struct handle *h = NULL;
    int count = images ? preload_images(pid, images, IMAGES) : 0;
    for (int i = 0; i < count && h == NULL; i++) {
        if (images[i].unreadable || images[i].map_end == 0 ||
            !preload_control_current(pid, &images[i], &c) || !preload_pid_matches(pid, c.pid))
            continue;
        if ((h = malloc(sizeof *h)) != NULL)
            h->image = images[i];
    }
    free(images);
    return h;
}

static int read_record(pid_t pid, void *handle, struct qaudit_control *out)
{
    return preload_control_read(pid, &((struct handle *)handle)->image, out);
}

static int request_dump(pid_t pid, void *handle, uint64_t token)
{
    return preload_control_request(pid, &((struct handle *)handle)->image, token);
}

/* A lazy dump thread started as qaudit snapshot starts it (ptrace_writer_start.c), after the
 * checks qaudit attach makes before any ptrace call: a stopped process is left stopped (tried
 * again once it runs), another tracer's is refused with its name rather than ptrace's EPERM. */
static int start_writer(pid_t pid, void *handle, char *why, size_t size)
{
    char state[64], tracer[32];
    proc_status_field(pid, "State:", state, sizeof state);
    if (state[0] == '\0' || state[0] == 'Z' || state[0] == 'X') {
        snprintf(why, size, "it has ended");
        return ESRCH;
    }
    proc_status_field(pid, "TracerPid:", tracer, sizeof tracer);
    if (atoi(tracer) != 0) {
        snprintf(why, size, "it is traced by process %s (a debugger?): ptrace refused", tracer);
        return EPERM;
    }
    if (state[0] == 'T' || state[0] == 't') {
        snprintf(why, size, "it is stopped (%s): started once it runs again", state);
        return EAGAIN;
    }
    int err = preload_writer_start(pid, &((struct handle *)handle)->image, why, size);
    return err == EBUSY ? EAGAIN : err;
}

int command_serve(int argc, char **argv)
{
    long timeout_ms = 2000, interval_ms = 1000, max_targets = 1024;
    const char *listen = "127.0.0.1:9464", *token_file = NULL, *state_dir = NULL;
    const struct option_spec specs[] = {
        {"listen", 0, OPTION_VALUE, OPTION_STRING, &listen, 0, NULL, "address and port"},
        {"token-file", 0, OPTION_VALUE, OPTION_STRING, &token_file, 0, NULL, "bearer token"},
        {"timeout", 0, OPTION_VALUE, OPTION_NUMBER, &timeout_ms, 10, NULL, "ms per dump"},
        {"min-interval", 0, OPTION_VALUE, OPTION_NUMBER, &interval_ms, 0, NULL, "ms"},
        {"max-targets", 0, OPTION_VALUE, OPTION_NUMBER, &max_targets, 1, NULL, "processes"},
        {"state-dir", 0, OPTION_VALUE, OPTION_STRING, &state_dir, 0, NULL, "directory"},
        {"help", 0, OPTION_NO_VALUE, OPTION_HELP, NULL, 0, NULL, "this text"},
        {0}};
    const struct option_table table = {"serve", serve_usage, false, specs};
    int operand = 0, parsed = option_parse(&table, argc, argv, &operand);
    if (parsed != OPTIONS_PARSED)
        return parsed;
    if (operand != argc)
        return usage_error("serve", "takes no operand");
    const struct serve_options options = {.listen = listen,
                                          .token_file = token_file,
                                          .timeout_s = timeout_ms / 1000.0,
                                          .min_interval_s = interval_ms / 1000.0,
                                          .max_targets = max_targets,
                                          .state_dir = state_dir};
    static const struct serve_control_ops ops = {open_record, read_record, request_dump,
                                                 start_writer, free};
    return serve_run(&options, &ops);
}
