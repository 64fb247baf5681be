/* qaudit gate's allocation half (gate_alloc.c), called by cmd_gate.c. */
#ifndef CLI_GATE_ALLOC_H
#define CLI_GATE_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

struct gate_report;

struct gate_alloc_request {
    const char *baseline; /* the file checked, or written */
    char **dumps;         /* --dump's, each a dump, a directory or a glob */
    size_t dump_count;
    const char *binary;    /* the main program's file for symbols, or NULL */
    const char *per_text;  /* --per as given, or NULL */
    double per, tolerance; /* --per (0: none), --tolerance (negative: none) */
    bool github;           /* --format github */
    const char *junit;     /* --junit FILE, or NULL */
};

/* --write-baseline with --dump: the run's rules into q->baseline. 0, or 2 after one line. */
int gate_alloc_write(const struct gate_alloc_request *q, const char *path);
/* --baseline with --dump: the rules checked and said after the struct half's (structs and its
 * accept command, or NULL when that half did not run). 0 all held, 1 some broke, 2 after one
 * line for dumps or a baseline that cannot be compared. */
int gate_alloc_check(const struct gate_alloc_request *q, const struct gate_report *structs,
                     const char *struct_accept);

#endif
