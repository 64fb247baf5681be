/* Numbers as every format writes them (numbers.c): the bottom of the reports library. */
#ifndef REPORTS_NUMBERS_H
#define REPORTS_NUMBERS_H

#include <stddef.h>

/* 1234567 -> "1,234,567" */
const char *report_fmt_count(char *buf, size_t size, unsigned long long n);
/* 1234567 -> "1.18 MiB"; below 10 KiB exact bytes "1,234 B". */
const char *report_fmt_bytes(char *buf, size_t size, unsigned long long n);

#endif
