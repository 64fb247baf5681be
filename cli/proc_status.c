/* A field of /proc/PID/status, for the commands that look at a process before they touch it with
 * ptrace (qaudit attach's checks, qaudit serve's start of a forked child's dump thread). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

void proc_status_field(pid_t pid, const char *name, char *out, size_t size)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    while (f != NULL && fgets(line, sizeof line, f))
        if (strncmp(line, name, strlen(name)) == 0) {
            snprintf(out, size, "%s", line + strlen(name) + strspn(line + strlen(name), " \t"));
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    if (f != NULL)
        fclose(f);
}
