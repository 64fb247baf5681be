/* Option parsing shared by the subcommands, and the one line a mistake gets: what was wrong and,
 * for a misspelled option or command, the nearest valid one. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A whole decimal in [min, 2^20] for --option of command, or false after saying why. */
bool parse_option_number(const char *command, const char *option, const char *text, long min,
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

/* Levenshtein distance between a and the first n bytes of b (both short: names of options). */
static size_t edit_distance(const char *a, const char *b, size_t n)
{
    size_t m = strlen(a), row[64];
    if (m >= 64 || n >= 64)
        return SIZE_MAX;
    for (size_t j = 0; j <= n; j++)
        row[j] = j;
    for (size_t i = 1; i <= m; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= n; j++) {
            size_t above = row[j];
            size_t best = diagonal + (a[i - 1] != b[j - 1]);
            best = above + 1 < best ? above + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[n];
}

const char *nearest_name(const char *word, const char *const *names, size_t count)
{
    size_t length = strcspn(word, "=");
    size_t best = SIZE_MAX;
    const char *nearest = NULL;
    for (size_t i = 0; i < count; i++) {
        size_t d = edit_distance(names[i], word, length);
        /* a prefix ("--form" for "--format") is near however short */
        if (length > 0 && strncmp(names[i], word, length) == 0)
            d = 1;
        if (d < best) {
            best = d;
            nearest = names[i];
        }
    }
    size_t allowed = length / 3 > 2 ? length / 3 : 2;
    return best <= allowed ? nearest : NULL;
}

int option_error(const char *command, int opt, char **argv, const struct option *options)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "?";
    if (opt == ':') {
        fprintf(stderr, "qaudit %s: %s wants a value (qaudit %s --help)\n", command, arg, command);
        return 2;
    }
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
        fprintf(stderr, "qaudit %s: unknown option -%c (qaudit %s --help lists them)\n", command,
                optopt ? optopt : '?', command);
        return 2;
    }
    const char *names[64];
    size_t count = 0;
    for (size_t i = 0; options[i].name != NULL && count < 64; i++)
        names[count++] = options[i].name;
    const char *near = nearest_name(arg + 2, names, count);
    int length = (int)strcspn(arg, "=");
    if (near != NULL && strlen(near) == (size_t)length - 2 &&
        strncmp(near, arg + 2, length - 2) == 0)
        fprintf(stderr, "qaudit %s: %.*s takes no value\n", command, length, arg);
    else if (near != NULL)
        fprintf(stderr, "qaudit %s: unknown option %.*s (did you mean --%s?)\n", command, length,
                arg, near);
    else
        fprintf(stderr, "qaudit %s: unknown option %.*s (qaudit %s --help lists them)\n", command,
                length, arg, command);
    return 2;
}

int usage_error(const char *command, const char *problem)
{
    fprintf(stderr, "qaudit %s: %s (qaudit %s --help)\n", command, problem, command);
    return 2;
}

bool write_finished(const char *command, FILE *out, const char *path)
{
    errno = 0;
    int failed = fflush(out) != 0 ? errno : ferror(out) ? EIO : 0;
    if (out != stdout && fclose(out) != 0 && failed == 0)
        failed = errno ? errno : EIO;
    if (failed == 0)
        return true;
    fprintf(stderr, "qaudit %s: cannot write %s: %s\n", command, path, strerror(failed));
    return false;
}
