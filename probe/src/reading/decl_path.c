/* Joining a DW_AT_decl_file to DW_AT_comp_dir and tidying it, without touching the file system
 * (the sources need not exist where the gate runs). */
#include "probe_reading.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True when out[0, len) ends with a ".." component (one that cannot be removed). */
static bool ends_with_dotdot(const char *out, size_t len)
{
    return len >= 2 && strncmp(out + len - 2, "..", 2) == 0 && (len == 2 || out[len - 3] == '/');
}

char *probe_decl_path(const char *file, const char *comp_dir)
{
    bool relative = file[0] != '/' && comp_dir != NULL && comp_dir[0] != '\0';
    size_t n = strlen(file) + (relative ? strlen(comp_dir) + 1 : 0) + 2;
    char *joined = malloc(n), *out = malloc(n);
    if (joined == NULL || out == NULL) {
        free(joined);
        free(out);
        return NULL;
    }
    snprintf(joined, n, "%s%s%s", relative ? comp_dir : "", relative ? "/" : "", file);
    bool absolute = joined[0] == '/';
    size_t len = 0;
    out[0] = '\0';
    /* Component by component: "." dropped, ".." removes the one before (never the root). */
    for (char *part = strtok(joined, "/"); part != NULL; part = strtok(NULL, "/")) {
        if (strcmp(part, ".") == 0 || (strcmp(part, "..") == 0 && absolute && len == 0))
            continue;
        if (strcmp(part, "..") == 0 && len > 0 && !ends_with_dotdot(out, len)) {
            while (len > 0 && out[len - 1] != '/')
                len--;
            len -= len > 0 && !(absolute && len == 1) ? 1 : 0;
            len = absolute && len == 1 ? 0 : len;
            out[len] = '\0';
            continue;
        }
        len += (size_t)snprintf(out + len, n - len, "%s%s", len > 0 || absolute ? "/" : "", part);
    }
    if (len == 0)
        snprintf(out, n, "%s", absolute ? "/" : ".");
    free(joined);
    return out;
}
