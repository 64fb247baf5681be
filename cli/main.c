/* qaudit: one command, thin dispatch to the libraries. Exit codes everywhere: 0 ok, 1 a check
 * failed, 2 bad usage or input (one line on stderr says what and where). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/classes.h"
#include "probe/gate.h"
#include "probe/layout.h"
#include "probe/render.h"

static const char usage[] =
    "usage: qaudit COMMAND [OPTIONS]\n"
    "  layout BINARY [--type NAME]... [--format text|json|md] [--cacheline N] [--min-holes N]\n"
    "                [--debug-file FILE]   struct layouts from DWARF\n"
    "  classes [--probe [LIB.so]] SIZE...  allocator size classes for sizes\n"
    "  gate --baseline FILE BINARY           CI gate (--write-baseline FILE --type NAME... to "
    "create)\n"
    "Not yet here: run, snapshot, report, compare (see README.md, Status).\n";

static const char gate_usage[] =
    "usage: qaudit gate --baseline FILE [--format text|github] [--junit FILE] [--cacheline N]\n"
    "                   [--debug-file FILE] BINARY\n"
    "       qaudit gate --write-baseline FILE --type NAME... BINARY\n"
    "  Checks each rule of the baseline (size, max_size, max_class, offsets, within, max_holes)\n"
    "  against BINARY's DWARF; prints every broken rule on one line. Exit 0: all hold, 1: some\n"
    "  rule broke, 2: bad usage or input (a type BINARY lacks, a malformed baseline, no DWARF).\n";

static const char classes_usage[] =
    "usage: qaudit classes [--probe [LIB.so]] SIZE...\n"
    "  The class (bytes reserved), usable size and waste of each SIZE under the glibc,\n"
    "  mimalloc, jemalloc and tcmalloc models. With --probe, a child with LIB.so preloaded (the C\n"
    "  library's allocator when no LIB is given) allocates blocks of each size and reports usable\n"
    "  size, stride and alignment, and whether the model agrees (exit 1 when it does not).\n";

static const char layout_usage[] =
    "usage: qaudit layout BINARY [--type NAME]... [--format text|json|md] [--cacheline N]\n"
    "                     [--min-holes N] [--debug-file FILE] [--expand]\n"
    "  --type NAME        a struct, class or union, exact or glob (repeatable); all by default\n"
    "  --format text|json|md  pahole-like text (default), qaudit-layout/1 JSON, or Markdown\n"
    "  --cacheline N      cache-line size for boundaries and straddles (default 64)\n"
    "  --min-holes N      only types with at least N holes\n"
    "  --debug-file FILE  read DWARF from FILE (default: BINARY, or its separate debug file)\n"
    "  --expand           also list the members of struct and union members, at absolute offsets\n";

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

/* A whole decimal in [min, 2^20] for --option of command, or false after saying why. */
static bool parse_option_number(const char *command, const char *option, const char *text, long min,
                                long *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end != '\0' || end == text || v < min || v > 1 << 20) {
        fprintf(stderr, "qaudit %s: --%s wants a number from %ld to %d, got '%s'\n", command,
                option, min, 1 << 20, text);
        return false;
    }
    *out = v;
    return true;
}

static int command_layout(int argc, char **argv)
{
    static const struct option options[] = {{"type", required_argument, NULL, 't'},
                                            {"format", required_argument, NULL, 'f'},
                                            {"cacheline", required_argument, NULL, 'c'},
                                            {"min-holes", required_argument, NULL, 'm'},
                                            {"debug-file", required_argument, NULL, 'd'},
                                            {"expand", no_argument, NULL, 'e'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    char **patterns = calloc((size_t)argc, sizeof *patterns);
    size_t pattern_count = 0;
    const char *format = "text", *debug_file = NULL;
    bool expand = false;
    long cacheline = 64, min_holes = 0;
    int opt, status = 0;
    struct layout_set set = {0};
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 't':
            patterns[pattern_count++] = optarg;
            break;
        case 'f':
            format = optarg;
            if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0 &&
                strcmp(format, "md") != 0) {
                fprintf(stderr, "qaudit layout: --format wants text, json or md, got '%s'\n",
                        format);
                status = 2;
                goto done;
            }
            break;
        case 'c':
            if (!parse_option_number("layout", "cacheline", optarg, 1, &cacheline)) {
                status = 2;
                goto done;
            }
            break;
        case 'm':
            if (!parse_option_number("layout", "min-holes", optarg, 0, &min_holes)) {
                status = 2;
                goto done;
            }
            break;
        case 'd':
            debug_file = optarg;
            break;
        case 'e':
            expand = true;
            break;
        case 'h':
            fputs(layout_usage, stdout);
            goto done;
        default:
            fputs(layout_usage, stderr);
            status = 2;
            goto done;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "qaudit layout: expected one BINARY\n%s", layout_usage);
        status = 2;
        goto done;
    }
    const char *binary = argv[optind];
    char error[512];
    struct layout_options read_options = {debug_file, expand};
    if (layout_read(binary, &read_options, &set, error, sizeof error) != LAYOUT_OK) {
        fprintf(stderr, "qaudit layout: %s\n", error);
        status = 2;
        goto done;
    }
    json_t *types = json_array();
    for (size_t i = 0; i < set.count; i++) {
        const struct layout_type *t = &set.types[i];
        if (!selected(t, patterns, pattern_count, min_holes))
            continue;
        if (format[0] == 'j')
            json_array_append_new(types, layout_type_json(t));
        else if (format[0] == 'm')
            layout_print_markdown(stdout, t);
        else
            layout_print_text(stdout, t, (unsigned)cacheline);
    }
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
done:
    layout_free(&set);
    free(patterns);
    return status;
}

static int command_gate(int argc, char **argv)
{
    static const struct option options[] = {{"baseline", required_argument, NULL, 'b'},
                                            {"write-baseline", required_argument, NULL, 'w'},
                                            {"type", required_argument, NULL, 't'},
                                            {"format", required_argument, NULL, 'f'},
                                            {"junit", required_argument, NULL, 'j'},
                                            {"cacheline", required_argument, NULL, 'c'},
                                            {"debug-file", required_argument, NULL, 'd'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *baseline = NULL, *write_to = NULL, *format = "text", *junit = NULL;
    const char *debug_file = NULL;
    char **patterns = calloc((size_t)argc, sizeof *patterns);
    size_t pattern_count = 0;
    long cacheline = 64;
    int opt, status = 0;
    struct layout_set set = {0};
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'b':
            baseline = optarg;
            break;
        case 'w':
            write_to = optarg;
            break;
        case 't':
            patterns[pattern_count++] = optarg;
            break;
        case 'f':
            format = optarg;
            break;
        case 'j':
            junit = optarg;
            break;
        case 'c':
            if (!parse_option_number("gate", "cacheline", optarg, 1, &cacheline)) {
                status = 2;
                goto done;
            }
            break;
        case 'd':
            debug_file = optarg;
            break;
        case 'h':
            fputs(gate_usage, stdout);
            goto done;
        default:
            fputs(gate_usage, stderr);
            status = 2;
            goto done;
        }
    }
    const char *problem = NULL;
    if (optind != argc - 1)
        problem = "expected one BINARY";
    else if ((baseline == NULL) == (write_to == NULL))
        problem = "give either --baseline FILE or --write-baseline FILE";
    else if (write_to != NULL && pattern_count == 0)
        problem = "--write-baseline needs at least one --type NAME";
    else if (strcmp(format, "text") != 0 && strcmp(format, "github") != 0)
        problem = "--format wants text or github";
    if (problem != NULL) {
        fprintf(stderr, "qaudit gate: %s\n%s", problem, gate_usage);
        status = 2;
        goto done;
    }
    char error[512];
    struct layout_options read_options = {debug_file, false};
    if (layout_read(argv[optind], &read_options, &set, error, sizeof error) != LAYOUT_OK) {
        fprintf(stderr, "qaudit gate: %s\n", error);
        status = 2;
        goto done;
    }
    if (write_to != NULL) {
        status = gate_write_baseline(&set, patterns, pattern_count, write_to, error, sizeof error);
        if (status != GATE_PASSED)
            fprintf(stderr, "qaudit gate: %s\n", error);
        else
            printf("qaudit gate: wrote %s\n", write_to);
    } else {
        struct gate_report report;
        status = gate_check(&set, baseline, (unsigned)cacheline, &report, error, sizeof error);
        if (status == GATE_INPUT_ERROR) {
            fprintf(stderr, "qaudit gate: %s\n", error);
        } else {
            if (format[0] == 'g')
                gate_print_github(stdout, &report);
            else
                gate_print_text(stdout, &report);
            if (junit != NULL && !gate_write_junit(junit, &report)) {
                fprintf(stderr, "qaudit gate: cannot write %s\n", junit);
                status = GATE_INPUT_ERROR;
            }
        }
        gate_report_free(&report);
    }
done:
    layout_free(&set);
    free(patterns);
    return status;
}

/* Which model describes library (by file name), or glibc for the C library. */
static enum allocator model_for(const char *library)
{
    if (library == NULL)
        return ALLOC_GLIBC;
    for (int a = 1; a < ALLOC_COUNT; a++)
        if (strstr(library, class_models[a].name))
            return (enum allocator)a;
    return ALLOC_COUNT;
}

static int command_classes(int argc, char **argv)
{
    bool probe = false;
    const char *library = NULL;
    uint64_t *sizes = calloc((size_t)argc, sizeof *sizes);
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            fputs(classes_usage, stdout);
            free(sizes);
            return 0;
        }
        if (strcmp(argv[i], "--probe") == 0) {
            probe = true;
            if (i + 1 < argc && strstr(argv[i + 1], ".so"))
                library = argv[++i];
            continue;
        }
        char *end;
        unsigned long long v = strtoull(argv[i], &end, 10);
        if (*end != '\0' || v == 0 || v > (1ull << 30) || argv[i][0] == '-') {
            fprintf(stderr, "qaudit classes: '%s' is not a size from 1 to 1073741824\n%s", argv[i],
                    classes_usage);
            free(sizes);
            return 2;
        }
        sizes[n++] = v;
    }
    if (n == 0) {
        fputs(classes_usage, stderr);
        free(sizes);
        return 2;
    }
    printf("%10s", "size");
    for (int a = 0; a < ALLOC_COUNT; a++)
        printf(" | %-19s", class_models[a].name);
    printf("\n%10s", "");
    for (int a = 0; a < ALLOC_COUNT; a++)
        printf(" | %-19s", "class/usable/waste");
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        printf("%10llu", (unsigned long long)sizes[i]);
        for (int a = 0; a < ALLOC_COUNT; a++) {
            struct size_class c;
            class_of((enum allocator)a, sizes[i], &c);
            char cell[64];
            snprintf(cell, sizeof cell, "%llu/%llu/%llu", (unsigned long long)c.reserved,
                     (unsigned long long)c.usable, (unsigned long long)(c.reserved - sizes[i]));
            printf(" | %-19s", cell);
        }
        printf("\n");
    }
    int status = 0;
    if (probe) {
        enum allocator model = model_for(library);
        struct probe_result *results = calloc(n, sizeof *results);
        char error[512];
        if (!class_probe("/proc/self/exe", library, sizes, n, results, error, sizeof error)) {
            fprintf(stderr, "qaudit classes: %s\n", error);
            free(results);
            free(sizes);
            return 2;
        }
        printf("\nprobe: %s (model: %s)\n", library ? library : "the C library's malloc",
               model < ALLOC_COUNT ? class_models[model].version : "none");
        printf("%10s | %8s | %8s | %6s | %s\n", "size", "usable", "stride", "align", "model");
        for (size_t i = 0; i < n; i++) {
            struct size_class c;
            bool agrees = model < ALLOC_COUNT && class_of(model, sizes[i], &c) &&
                          c.usable == results[i].usable;
            printf("%10llu | %8llu | %8llu | %6llu | %s\n", (unsigned long long)sizes[i],
                   (unsigned long long)results[i].usable, (unsigned long long)results[i].stride,
                   (unsigned long long)results[i].align, agrees ? "agrees" : "DIFFERS");
            if (!agrees)
                status = 1;
        }
        free(results);
    }
    free(sizes);
    return status;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "__probe-child") == 0)
        return class_probe_child(argc - 2, argv + 2);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "layout") == 0)
        return command_layout(argc - 1, argv + 1);
    if (strcmp(argv[1], "classes") == 0)
        return command_classes(argc - 1, argv + 1);
    if (strcmp(argv[1], "gate") == 0)
        return command_gate(argc - 1, argv + 1);
    fprintf(stderr, "qaudit: unknown or not yet available command '%s'\n%s", argv[1], usage);
    return 2;
}
