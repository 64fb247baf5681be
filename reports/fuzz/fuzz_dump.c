/* libFuzzer harness for the dump reader and the renderers: any bytes read as a dump give either
 * a one-line input error or a report in every format (pprof and folded too), never a crash, a
 * hang or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/render.h"
#include "reports/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/qaudit-fuzz-dump-%d.json", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    struct report r = {0};
    char error[512];
    const char *one = path;
    if (report_load(&one, 1, &r, error, sizeof error) == REPORT_OK) {
        FILE *sink = fopen("/dev/null", "w");
        struct report_options options = {.top = 10, .cacheline = 64};
        for (int format = REPORT_TEXT; format <= REPORT_FOLDED && sink; format++)
            report_render(sink, &r, (enum report_format)format, &options);
        if (sink)
            fclose(sink);
    } else if (strchr(error, '\n') != NULL) {
        abort(); /* an input error is one line */
    }
    report_free(&r);
    unlink(path);
    return 0;
}
