/* qaudit: one command, thin dispatch to the libraries. Exit codes everywhere: 0 ok, 1 a check
 * failed, 2 bad usage or input (one line on stderr says what and where). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "probe/classes.h"

static const char usage[] =
    "usage: qaudit COMMAND [OPTIONS]   (qaudit COMMAND --help for each)\n"
    "  run [OPTIONS] -- COMMAND [ARGS...]  run a program under the interposer\n"
    "  snapshot PID [--timeout S]         ask a running preloaded process for a dump now\n"
    "  attach PID [--for S]               count a running process's allocations from now on\n"
    "  detach PID                         end an attach: last dump, entry points restored\n"
    "  report DUMP... [--binary BINARY]   allocation report (text|md|json|html)\n"
    "  diff BASE NEW [--binary BINARY]    two runs compared site by site "
    "(text|md|json|html|pprof)\n"
    "  compare BINARY [--dump DUMP]...    builds side by side\n"
    "  layout BINARY [--type NAME]...     struct layouts with allocator classes\n"
    "  classes [--probe [LIB.so]] SIZE... allocator size classes for sizes\n"
    "  gate --baseline FILE BINARY        CI gate (--write-baseline FILE --type NAME... to "
    "create)\n"
    "  serve [--listen HOST:PORT]         serve every preloaded process to Prometheus, "
    "Pyroscope, Parca\n"
    "  --version                          the version of qaudit\n"
    "Exit status: 0 ok, 1 a check failed, 2 bad usage or input.\n";

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"run", command_run},         {"snapshot", command_snapshot}, {"report", command_report},
    {"diff", command_diff},       {"compare", command_compare},   {"layout", command_layout},
    {"classes", command_classes}, {"gate", command_gate},         {"attach", command_attach},
    {"detach", command_detach},   {"serve", command_serve},
};
#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

/* One line: the command not known and the nearest that is. */
static int unknown_command(const char *word)
{
    const char *names[COMMAND_COUNT + 1];
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        names[i] = commands[i].name;
    names[COMMAND_COUNT] = "--version";
    const char *near = nearest_name(word, names, COMMAND_COUNT + 1);
    if (near != NULL)
        fprintf(stderr, "qaudit: unknown command '%s' (did you mean %s?)\n", word, near);
    else
        fprintf(stderr, "qaudit: unknown command '%s' (qaudit --help lists them)\n", word);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "__probe-child") == 0)
        return probe_class_probe_child(argc - 2, argv + 2);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("qaudit %s\n", QAUDIT_VERSION);
        return 0;
    }
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    return unknown_command(argv[1]);
}
