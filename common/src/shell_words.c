/* Shell quoting of the words of a command line printed for people to paste (shell_words.h). */
#include "common/shell_words.h"

#include <stdlib.h>
#include <string.h>

/* Characters no POSIX shell reads specially anywhere in a word. */
static const char plain_characters[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+-";

bool shell_word_append(char **line, size_t *len, const char *word)
{
    bool plain = word[0] != '\0';
    for (const char *p = word; *p && plain; p++)
        plain = strchr(plain_characters, *p) != NULL;
    /* The worst case: every character a quote (4 each), two quotes, a space and the NUL. */
    char *grown = realloc(*line, *len + 4 * strlen(word) + 4);
    if (grown == NULL)
        return false;
    *line = grown;
    char *out = grown + *len;
    if (*len > 0)
        *out++ = ' ';
    if (!plain)
        *out++ = '\'';
    for (const char *p = word; *p; p++) {
        if (*p == '\'' && !plain) {
            memcpy(out, "'\\''", 4);
            out += 4;
        } else {
            *out++ = *p;
        }
    }
    if (!plain)
        *out++ = '\'';
    *out = '\0';
    *len = (size_t)(out - grown);
    return true;
}
