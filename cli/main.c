/* qaudit: one command, thin dispatch to the libraries. Exit codes everywhere: 0 ok, 1 a check
 * failed, 2 bad usage or input (one line on stderr says what and where). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/layout.h"
#include "probe/render.h"

static const char usage[] =
    "usage: qaudit COMMAND [OPTIONS]\n"
    "  layout BINARY [--type NAME]... [--format text|json] [--cacheline N] [--min-holes N]\n"
    "                [--debug-file FILE]   struct layouts from DWARF\n"
    "Not yet here: run, snapshot, classes, gate, report, compare (see README.md, Status).\n";

static const char layout_usage[] =
    "usage: qaudit layout BINARY [--type NAME]... [--format text|json] [--cacheline N]\n"
    "                     [--min-holes N] [--debug-file FILE]\n"
    "  --type NAME        a struct, class or union, exact or glob (repeatable); all by default\n"
    "  --format text|json pahole-like text (default) or qaudit-layout/1 JSON\n"
    "  --cacheline N      cache-line size for boundaries and straddles (default 64)\n"
    "  --min-holes N      only types with at least N holes\n"
    "  --debug-file FILE  read DWARF from FILE (default: BINARY, or its separate debug file)\n";

static bool selected(const struct layout_type *t, char **patterns, size_t n, long min_holes)
{
    if ((long)t->hole_count < min_holes)
        return false;
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (layout_name_matches(patterns[i], t->name))
            return true;
    return false;
}

static int command_layout(int argc, char **argv)
{
    static const struct option options[] = {
        {"type", required_argument, NULL, 't'},       {"format", required_argument, NULL, 'f'},
        {"cacheline", required_argument, NULL, 'c'},  {"min-holes", required_argument, NULL, 'm'},
        {"debug-file", required_argument, NULL, 'd'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    char **patterns = calloc((size_t)argc, sizeof *patterns);
    size_t pattern_count = 0;
    const char *format = "text", *debug_file = NULL;
    long cacheline = 64, min_holes = 0;
    int opt;
    char *end;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 't':
            patterns[pattern_count++] = optarg;
            break;
        case 'f':
            format = optarg;
            if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0) {
                fprintf(stderr, "qaudit layout: --format wants text or json, got '%s'\n", format);
                return 2;
            }
            break;
        case 'c':
        case 'm': {
            long v = strtol(optarg, &end, 10);
            if (*end != '\0' || v < (opt == 'c' ? 1 : 0) || v > 1 << 20) {
                fprintf(stderr, "qaudit layout: --%s wants a number, got '%s'\n",
                        opt == 'c' ? "cacheline" : "min-holes", optarg);
                return 2;
            }
            *(opt == 'c' ? &cacheline : &min_holes) = v;
            break;
        }
        case 'd':
            debug_file = optarg;
            break;
        case 'h':
            fputs(layout_usage, stdout);
            return 0;
        default:
            fputs(layout_usage, stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "qaudit layout: expected one BINARY\n%s", layout_usage);
        return 2;
    }
    const char *binary = argv[optind];
    struct layout_set set;
    char error[512];
    if (layout_read(binary, debug_file, &set, error, sizeof error) != LAYOUT_OK) {
        fprintf(stderr, "qaudit layout: %s\n", error);
        layout_free(&set);
        free(patterns);
        return 2;
    }
    size_t shown = 0;
    json_t *types = json_array();
    for (size_t i = 0; i < set.count; i++) {
        const struct layout_type *t = &set.types[i];
        if (!selected(t, patterns, pattern_count, min_holes))
            continue;
        shown++;
        if (format[0] == 'j')
            json_array_append_new(types, layout_type_json(t));
        else
            layout_print_text(stdout, t, (unsigned)cacheline);
    }
    int status = 0;
    for (size_t p = 0; p < pattern_count; p++) {
        bool found = false;
        for (size_t i = 0; i < set.count && !found; i++)
            found = layout_name_matches(patterns[p], set.types[i].name);
        if (!found) {
            fprintf(stderr, "qaudit layout: no struct, class or union matches '%s' in %s\n",
                    patterns[p], binary);
            status = 2;
        }
    }
    if (format[0] == 'j') {
        json_t *doc = json_pack("{s:s, s:s, s:I, s:o}", "format", "qaudit-layout/1", "binary",
                                binary, "cacheline", (json_int_t)cacheline, "types", types);
        json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        json_decref(types);
    }
    (void)shown;
    layout_free(&set);
    free(patterns);
    return status;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "layout") == 0)
        return command_layout(argc - 1, argv + 1);
    fprintf(stderr, "qaudit: unknown or not yet available command '%s'\n%s", argv[1], usage);
    return 2;
}
