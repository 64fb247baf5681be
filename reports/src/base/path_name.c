/* A path's last component, as the reports name modules and programs by it; and a program's name
 * as the user ran it. */
#include <stdio.h>
#include <string.h>

#include "reports_base.h"
#include "reports/report.h"

const char *report_path_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

void program_name(const char *command_line, const char *exe, char *out, size_t size)
{
    const char *line = command_line ? command_line + strspn(command_line, " ") : "";
    size_t word = strcspn(line, " ");
    if (word == 0) { /* no command line (a kernel thread's, an empty title): the file's name */
        snprintf(out, size, "%s", report_path_base_name(exe ? exe : ""));
        return;
    }
    char first[512];
    snprintf(first, sizeof first, "%.*s", (int)word, line);
    size_t n = strlen(first);
    if (n > 1 && first[n - 1] == ':') /* a title: "nginx: worker process" */
        first[n - 1] = '\0';
    snprintf(out, size, "%s", report_path_base_name(first));
}
