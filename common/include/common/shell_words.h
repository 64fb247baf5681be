/* Command lines for people to paste into a POSIX shell (the gate's "to accept this change"
 * command): each word as it is when it needs no quoting, else single-quoted. */
#ifndef COMMON_SHELL_WORDS_H
#define COMMON_SHELL_WORDS_H

#include <stdbool.h>
#include <stddef.h>

/* Appends word to the malloc'd line *line of *len characters (NULL and 0 to start one), after a
 * space unless the line is empty: as it is when it is made only of letters, digits and
 * _./:=@%+-, else in single quotes, each ' in it written '\''. False, with the line as it was,
 * when memory ran out. */
bool shell_word_append(char **line, size_t *len, const char *word);

#endif
