/* The probe's inputs: checked files and offline libdwfl sessions with the standard callbacks,
 * so a separate debug file is found by build id or .gnu_debuglink. */
#include "input.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

bool probe_check_file(const char *path, char *error, size_t error_size)
{
    struct stat st;
    if (access(path, R_OK) != 0 || stat(path, &st) != 0) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(error, error_size, "%s: not a regular file", path);
        return false;
    }
    return true;
}

Dwfl_Module *probe_report_offline(const char *path, Dwfl **dwfl, char *error, size_t error_size)
{
    *dwfl = dwfl_begin(&offline_callbacks);
    Dwfl_Module *module = *dwfl ? dwfl_report_offline(*dwfl, "", path, -1) : NULL;
    if (module == NULL) {
        snprintf(error, error_size, "%s: not an ELF file libdwfl can read (%s)", path,
                 dwfl_errmsg(-1));
        if (*dwfl)
            dwfl_end(*dwfl);
        *dwfl = NULL;
        return NULL;
    }
    dwfl_report_end(*dwfl, NULL, NULL);
    return module;
}
