/* Numbers as every format writes them: counts with thousands separators, bytes in binary units.
 * A leaf: it calls nothing of the reports library, and every room may call it. */
#include "reports_base.h"

#include <stdio.h>

#include "reports/render.h"

const char *report_fmt_count(char *buf, size_t size, unsigned long long n)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", n);
    size_t out = 0;
    for (int i = 0; i < len && out + 2 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[out++] = ',';
        buf[out++] = digits[i];
    }
    buf[out] = '\0';
    return buf;
}

const char *report_fmt_bytes(char *buf, size_t size, unsigned long long n)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (n < 10 * 1024) {
        char count[32];
        snprintf(buf, size, "%s B", report_fmt_count(count, sizeof count, n));
        return buf;
    }
    double v = (double)n / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, "%.2f %s", v, units[u]);
    return buf;
}

const char *report_count_text(char *buf, size_t size, unsigned long long n)
{
    return report_fmt_count(buf, size, n);
}

const char *report_bytes_text(char *buf, size_t size, unsigned long long n)
{
    return report_fmt_bytes(buf, size, n);
}
