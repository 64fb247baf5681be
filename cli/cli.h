/* The qaudit command's subcommands and the helpers they share. Each returns the exit status:
 * 0 ok, 1 a check failed, 2 bad usage or input (one line on stderr says what and where). */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

int command_layout(int argc, char **argv);
int command_classes(int argc, char **argv);
int command_gate(int argc, char **argv);
int command_run(int argc, char **argv);
int command_snapshot(int argc, char **argv);
int command_report(int argc, char **argv);
int command_compare(int argc, char **argv);

/* A whole decimal in [min, 2^20] for --option of command, or false after saying why. */
bool parse_option_number(const char *command, const char *option, const char *text, long min,
                         long *out);

/* QAUDIT_OUT's pattern expanded as the interposer does: %p the pid, %% a percent sign, and %n
 * the sequence number, or "*" when sequence is negative (a glob for every sequence). */
void dump_path_expand(const char *pattern, pid_t pid, long sequence, char *out, size_t size);

/* The newest dump matching pattern for pid (by modification time), or false. */
bool dump_path_newest(const char *pattern, pid_t pid, char *out, size_t size);

#endif
