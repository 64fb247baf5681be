/* One option-parsing shape for the subcommands: a table of what each option is and where its
 * value goes, read by getopt_long (so abbreviations, --opt=value and --opt value, `--` and the
 * order of operands are getopt's, as they always were), every mistake said in one line by
 * option_error (options.c). The usage text stays the command's own string: it is printed as it
 * is written, its line breaks chosen by hand. */
#ifndef CLI_OPTION_PARSE_H
#define CLI_OPTION_PARSE_H

#include <stdbool.h>
#include <stddef.h>

enum option_takes { OPTION_NO_VALUE, OPTION_VALUE, OPTION_MAYBE_VALUE };

/* What an option does with its value, and what `to` points at. */
enum option_kind {
    OPTION_SET,    /* bool: true */
    OPTION_CLEAR,  /* bool: false (--no-symbols) */
    OPTION_STRING, /* const char *: the value; a repeated option keeps the last */
    OPTION_LIST,   /* struct option_list: the values in order (repeatable) */
    OPTION_NUMBER, /* long: a whole decimal in [min, 2^20] (parse_option_number) */
    OPTION_CALL,   /* call(to, value): false after one line on stderr that says why */
    OPTION_HELP,   /* the command's usage on standard output; parsing ends, exit 0 */
};

/* Values of a repeatable option: items has room for argc of them (no option repeats more). */
struct option_list {
    char **items; /* argv's own strings */
    size_t count;
};

struct option_spec {
    const char *name; /* without "--"; NULL: only the short one (-o) */
    char short_name;  /* 0: none */
    enum option_takes takes;
    enum option_kind kind;
    void *to;
    long min; /* OPTION_NUMBER: the smallest value taken */
    bool (*call)(void *to, char *value);
    const char *help; /* what it is for, in a few words (the usage text says it in full) */
};

/* A subcommand's options: specs ends with an entry whose name and short_name are both 0. */
struct option_table {
    const char *command;  /* "layout": its lines start "qaudit layout: " */
    const char *usage;    /* printed as it is for --help */
    bool stop_at_operand; /* qaudit run: the first operand and what follows are the program's */
    const struct option_spec *specs;
};

/* The end of parsing: what is left is argv[*operand] to argv[argc - 1]. */
#define OPTIONS_PARSED (-1)

/* argv's options (argv[0] is the command's name), each where its spec says: OPTIONS_PARSED with
 * the first operand's index in *operand, 0 after --help printed the usage, or 2 after one line
 * on stderr (an unknown option with the nearest known, a missing value, a value refused). */
int option_parse(const struct option_table *table, int argc, char **argv, int *operand);

#endif
