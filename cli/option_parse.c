/* The subcommands' option tables read through getopt_long (option_parse.h says why getopt's). */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "option_parse.h"

/* More options than any subcommand has (report: 16). */
#define SPECS_AT_MOST 48

/* The value getopt_long returns for spec i's long name: above every short letter. */
#define LONG_VALUE(i) (256 + (int)(i))

static bool spec_end(const struct option_spec *s)
{
    return s->name == NULL && s->short_name == 0;
}

/* getopt_long's tables from ours: the long names in the table's order (option_error's nearest
 * name is the first of the nearest, so the order is kept), the short letters after "+" when the
 * first operand ends the options and ":" so that a missing value is told from an unknown one. */
static bool getopt_tables(const struct option_table *t, struct option *longs, char *shorts)
{
    size_t n = 0;
    char *s = shorts;
    if (t->stop_at_operand)
        *s++ = '+';
    *s++ = ':';
    for (size_t i = 0; !spec_end(&t->specs[i]); i++) {
        const struct option_spec *spec = &t->specs[i];
        if (i >= SPECS_AT_MOST)
            return false;
        int has = spec->takes == OPTION_VALUE         ? required_argument
                  : spec->takes == OPTION_MAYBE_VALUE ? optional_argument
                                                      : no_argument;
        if (spec->name != NULL)
            longs[n++] = (struct option){spec->name, has, NULL, LONG_VALUE(i)};
        if (spec->short_name != 0) {
            *s++ = spec->short_name;
            for (int k = 0; k < has; k++)
                *s++ = ':';
        }
    }
    longs[n] = (struct option){NULL, 0, NULL, 0};
    *s = '\0';
    return true;
}

/* The spec getopt_long's answer stands for, or NULL ('?' and ':'). */
static const struct option_spec *spec_of(const struct option_table *t, int opt)
{
    for (size_t i = 0; !spec_end(&t->specs[i]); i++)
        if (opt == LONG_VALUE(i) || (opt < 256 && opt == t->specs[i].short_name))
            return &t->specs[i];
    return NULL;
}

/* The value put where spec says: OPTIONS_PARSED, 0 (help printed) or 2 (said why). */
static int take(const struct option_table *t, const struct option_spec *spec, char *value)
{
    switch (spec->kind) {
    case OPTION_SET:
        *(bool *)spec->to = true;
        break;
    case OPTION_CLEAR:
        *(bool *)spec->to = false;
        break;
    case OPTION_STRING:
        *(const char **)spec->to = value;
        break;
    case OPTION_LIST: {
        struct option_list *list = spec->to;
        list->items[list->count++] = value;
        break;
    }
    case OPTION_NUMBER:
        if (!parse_option_number(t->command, spec->name, value, spec->min, spec->to))
            return 2;
        break;
    case OPTION_CALL:
        if (!spec->call(spec->to, value))
            return 2;
        break;
    case OPTION_HELP:
        fputs(t->usage, stdout);
        return 0;
    }
    return OPTIONS_PARSED;
}

int option_parse(const struct option_table *table, int argc, char **argv, int *operand)
{
    struct option longs[SPECS_AT_MOST + 1];
    char shorts[3 * SPECS_AT_MOST + 3];
    if (!getopt_tables(table, longs, shorts)) {
        fprintf(stderr, "qaudit %s: more than %d options\n", table->command, SPECS_AT_MOST);
        return 2;
    }
    int opt;
    opterr = 0; /* a mistake is said in one line, by option_error */
    optind = 0; /* getopt starts afresh: each parse reads its own argv */
    while ((opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        const struct option_spec *spec = spec_of(table, opt);
        if (spec == NULL)
            return option_error(table->command, opt, argv, longs);
        int status = take(table, spec, optarg);
        if (status != OPTIONS_PARSED)
            return status;
    }
    *operand = optind;
    return OPTIONS_PARSED;
}
