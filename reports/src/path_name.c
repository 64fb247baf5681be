/* A path's last component, as the reports name modules and programs by it. */
#include <string.h>

#include "internal.h"

const char *path_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}
