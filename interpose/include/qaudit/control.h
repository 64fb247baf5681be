/* What a running libqaudit-preload.so tells `qaudit snapshot` about itself: an exported,
 * fixed-layout record (symbol QAUDIT_CONTROL_SYMBOL) that the tool reads out of the process's
 * memory with process_vm_readv, never from /proc/PID/environ (programs rewrite their environment).
 * Written only by the preload; a reader checks magic and version and retries a torn read (the
 * generation is odd while the preload updates the record). */
#ifndef QAUDIT_CONTROL_H
#define QAUDIT_CONTROL_H

#include <stdint.h>

#define QAUDIT_CONTROL_SYMBOL "qaudit_control"
#define QAUDIT_CONTROL_MAGIC "qaudit-control"
#define QAUDIT_CONTROL_VERSION 1
#define QAUDIT_CONTROL_PATH_MAX 1024

enum qaudit_control_signal_state {
    QAUDIT_SIGNAL_ON = 0,      /* signal_number asks for a dump */
    QAUDIT_SIGNAL_OFF = 1,     /* QAUDIT_SIGNAL=off */
    QAUDIT_SIGNAL_CLAIMED = 2, /* the program installed its own handler: dumps on demand are off */
    QAUDIT_SIGNAL_NO_WRITER = 3 /* the dump thread could not start */
};

struct qaudit_control {
    char magic[16];       /* QAUDIT_CONTROL_MAGIC, NUL-padded */
    uint32_t version;     /* QAUDIT_CONTROL_VERSION */
    uint32_t generation;  /* odd while being updated */
    int32_t pid;          /* the process this record speaks for (updated in a forked child) */
    int32_t signal_number;
    uint32_t signal_state; /* enum qaudit_control_signal_state */
    uint32_t reserved;
    uint64_t start_time_ns; /* this image's start, CLOCK_REALTIME */
    uint64_t dumps_written; /* finished dump files of this process image */
    char pattern[QAUDIT_CONTROL_PATH_MAX];   /* QAUDIT_OUT, made absolute at start-up */
    char last_dump[QAUDIT_CONTROL_PATH_MAX]; /* the path of the last finished dump, or "" */
};

#endif
