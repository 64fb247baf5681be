/* Option parsing shared by the subcommands. */
#include <stdio.h>
#include <stdlib.h>

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
