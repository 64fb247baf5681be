/* What a running libqaudit-preload.so tells `qaudit snapshot` about itself, and how the tool asks
 * it for a dump: an exported, fixed-layout record (symbol QAUDIT_CONTROL_SYMBOL) that the tool
 * reads out of the process's memory with process_vm_readv, never from /proc/PID/environ
 * (programs rewrite their environment). The preload writes every field but `request`, which the
 * tool writes with process_vm_writev: the preload's writer thread looks at it every poll_ms
 * milliseconds and, when it differs from `served`, writes a dump and sets `served` to it. No
 * signal is involved, so it works on programs that own every signal or block them all.
 * A reader checks magic and version and retries a torn read (the generation is odd while the
 * preload updates the record). */
#ifndef QAUDIT_CONTROL_H
#define QAUDIT_CONTROL_H

#include <stdint.h>

#define QAUDIT_CONTROL_SYMBOL "qaudit_control"
#define QAUDIT_CONTROL_MAGIC "qaudit-control"
#define QAUDIT_CONTROL_VERSION 5
#define QAUDIT_CONTROL_PATH_MAX 1024
#define QAUDIT_CONTROL_ERROR_MAX 256
#define QAUDIT_CONTROL_RUN_ID_MAX 40 /* QAUDIT_RUN_ID: 32 characters at most, NUL-padded */
/* A dump the run's directory refused goes to the fallback directory under this prefix, then
 * QAUDIT_RUN_ID and '-' when set (docs/dump-format.md); qaudit run moves them after the run. */
#define QAUDIT_FALLBACK_PREFIX "qaudit-fallback-"

enum qaudit_control_signal_state {
    QAUDIT_SIGNAL_ON = 0,       /* signal_number asks for a dump */
    QAUDIT_SIGNAL_OFF = 1,      /* QAUDIT_SIGNAL=off */
    QAUDIT_SIGNAL_CLAIMED = 2,  /* the program installed its own handler: dumps on it are off */
    QAUDIT_SIGNAL_NO_WRITER = 3 /* the dump thread could not start */
};

enum qaudit_control_writer_state {
    QAUDIT_WRITER_STARTING = 0, /* not running yet: requests wait */
    QAUDIT_WRITER_RUNNING = 1,  /* serves requests every poll_ms */
    QAUDIT_WRITER_FAILED = 2,   /* could not start: only exit dumps */
    /* Version 4: the writer starts when the program allocates QAUDIT_WRITER_LAZY_MS after the
     * image's start or fork, or when called (qaudit_writer_start, which qaudit snapshot calls
     * through ptrace); until then requests wait. (Version 4 as first released: in forked
     * children only.) */
    QAUDIT_WRITER_LAZY = 3
};
#define QAUDIT_WRITER_LAZY_MS 100
/* The preload's function that starts a lazy writer: int qaudit_writer_start(void), 0 when the
 * writer runs (or was started), -errno when it cannot start. */
#define QAUDIT_WRITER_START_SYMBOL "qaudit_writer_start"

enum qaudit_control_attach_state {
    QAUDIT_ATTACH_NONE = 0,     /* the process started under the preload (LD_PRELOAD) */
    QAUDIT_ATTACH_ACTIVE = 1,   /* loaded by qaudit attach: counting since attached_at_ns */
    QAUDIT_ATTACH_DETACHED = 2, /* qaudit detach restored every entry point: the preload is inert */
    QAUDIT_ATTACH_STARTING = 3  /* loaded by qaudit attach, not counting yet */
};

/* What qaudit attach could not do as asked (allocator entry points it cannot reach, a setting a
 * later attach cannot change), for the command to print once qaudit_attach_start has returned:
 * lines, each ended by '\n', in a char array of QAUDIT_ATTACH_NOTES_MAX bytes the preload
 * exports under this name; "" when there is nothing to say. */
#define QAUDIT_ATTACH_NOTES_SYMBOL "qaudit_attach_notes"
#define QAUDIT_ATTACH_NOTES_MAX 1024

struct qaudit_control {
    char magic[16];      /* QAUDIT_CONTROL_MAGIC, NUL-padded */
    uint32_t version;    /* QAUDIT_CONTROL_VERSION */
    uint32_t generation; /* odd while being updated */
    int32_t pid;         /* the process this record speaks for (updated in a forked child) */
    int32_t signal_number;
    uint32_t signal_state;                   /* enum qaudit_control_signal_state */
    uint32_t writer_state;                   /* enum qaudit_control_writer_state */
    uint64_t start_time_ns;                  /* this image's start, CLOCK_REALTIME */
    uint64_t dumps_written;                  /* finished dump files of this process image */
    char pattern[QAUDIT_CONTROL_PATH_MAX];   /* QAUDIT_OUT, made absolute at start-up */
    char last_dump[QAUDIT_CONTROL_PATH_MAX]; /* the path of the last finished dump, or "" */
    /* Version 2: dumps on request, and why the last one failed. */
    uint64_t request;  /* written by qaudit snapshot: a token that differs from served */
    uint64_t served;   /* the last request token the writer thread acted on */
    uint32_t poll_ms;  /* how often the writer thread reads request */
    uint32_t failures; /* dumps that could not be written so far */
    char last_error[QAUDIT_CONTROL_ERROR_MAX]; /* the preload's reason for the last failure */
    /* Version 3: qaudit attach and detach. */
    uint32_t attach_state;   /* enum qaudit_control_attach_state */
    uint32_t redirected;     /* entry points the attach redirected in the modules' GOTs */
    uint64_t attached_at_ns; /* CLOCK_REALTIME when counting started after an attach, or 0 */
    uint64_t detach_request; /* written by qaudit detach: a token that differs from detach_served */
    uint64_t detach_served;  /* the last detach token acted on (dump written, entries restored) */
    /* Version 5: the run the process belongs to, for qaudit run's survivors: a daemon that
     * rewrites its environment for a process title (nginx, PostgreSQL) is still known as the
     * run's. */
    char run_id[QAUDIT_CONTROL_RUN_ID_MAX]; /* QAUDIT_RUN_ID as the preload read it, or "" */
};

#endif
