/* libFuzzer harness for the layout reader: each input is an ELF file (handed to libdwfl through a
 * memfd); whatever the bytes, layout_read must return OK or an input error, never crash. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "probe/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("qaudit-fuzz", MFD_CLOEXEC);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct layout_set set;
    char error[256];
    layout_read(path, NULL, &set, error, sizeof error);
    layout_free(&set);
    close(fd);
    return 0;
}
