/* Errors are one line: what a reader quotes from its input (jansson's "near '...'") or a path
 * may hold a newline or another control character, which becomes '?'. */
#include "reports_base.h"

void report_one_line(char *text)
{
    for (unsigned char *c = (unsigned char *)text; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            *c = '?';
}
