/* The interposer's base layer: what every other part may call, and which calls nothing above it.
 * Settings, lines on stderr, raw memory and clocks, the start-up state, the next allocator and
 * the usable size of its blocks, the per-thread records with their gate and re-entrancy guard,
 * the interposer's own descriptors, the JSON writer, signal and error names, the lock dumps take,
 * and debug-build assertions. Files: the .c files of base/.
 * Context: each function's own file says where it runs and what is forbidden there. */
#ifndef QAUDIT_BASE_H
#define QAUDIT_BASE_H

#include <stdarg.h>

#include "../types.h"
#include "common/dump_keys.h"
#include "assert.h"
#include "context.h"
#include "globals.h"

/* ---- config.c: QAUDIT_* read once at start-up ---- */
extern struct qa_config qa_cfg;
void qa_config_load(void);
void qa_config_load_given(const char *block);   /* qaudit attach's NAME=VALUE\0...\0 block */
bool qa_config_reload_given(const char *block); /* a later attach: its QAUDIT_OUT only */
void qa_config_export(void); /* the absolute QAUDIT_OUT into the environment, for exec */

/* ---- log.c: one line on stderr, and the SIGPIPE guard every write of ours goes through.
 * Context: any thread; formats into a stack buffer (vsnprintf), no malloc. ---- */
void qa_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same line from strings up to a NULL, no formatting: for signal handlers. */
QA_CTX_SIGNAL_SAFE void qa_log_strings(const char *first, ...) __attribute__((sentinel));
void qa_write_stderr(const char *text, size_t n); /* the program's stderr, whatever the thread */
void qa_sigpipe_block(struct qa_sigpipe *g);
void qa_sigpipe_restore(struct qa_sigpipe *g, bool raised); /* raised: the write got EPIPE */

/* ---- system.c: raw memory, clocks and futexes (any context) ---- */
struct timespec;
void *qa_mmap(size_t bytes);
void qa_futex(_Atomic int *word, int op, int value, const struct timespec *timeout);
uint64_t qa_now_ns(void);       /* CLOCK_REALTIME: the times a dump gives */
uint64_t qa_monotonic_ns(void); /* CLOCK_MONOTONIC: the writer thread's schedule */

/* ---- runtime_code.c: the C library's and the loader's code (found at start-up; any context
 * after) ---- */
void qa_runtime_code_find(void);
/* pc is in their code: a call from there may hold one of their locks. */
bool qa_runtime_code_holds(uintptr_t pc);

/* ---- lifecycle.c: when this process image began (how far start-up has come: globals.h) ---- */
void qa_image_started(void);      /* the preload's start in this image, or a fork's */
uint64_t qa_image_start_ns(void); /* CLOCK_REALTIME */
const char *qa_exe_path(void);    /* /proc/self/exe, read once per image ("" if unreadable) */

/* ---- bootstrap.c: dlsym's allocations before the next allocator is known, from a static
 * arena, each block with its size in front; recognised by address at free ---- */
void *qa_bootstrap_alloc(size_t size, size_t align);
size_t qa_bootstrap_size(const void *p);

/* ---- real.c: the next allocator in link order, resolved once at start-up ---- */
/* false: no allocator after this one (nothing can be counted). attached: the process ran
 * without the preload, whose own definitions then come last: the allocator is the first one
 * (RTLD_DEFAULT) rather than the next (RTLD_NEXT). */
bool qa_real_resolve(bool attached);

/* ---- usable.c: a block's usable size, from glibc's chunk header when that is provably the
 * same as asking (decided at start-up). Context: the malloc fast path. ---- */
void qa_usable_choose(const struct qa_usable_probe *next);
const char *qa_usable_source(void);

/* ---- threads.c: per-thread records, mapped on a thread's first counted call (once ready),
 * reused after it exits; found through initial-exec TLS, so reading it never allocates ---- */
/* What a part sets up in each record, called by threads.c on the slow path: a record's first
 * mapping (order: how many were mapped before it), and each new owner of it. */
struct qa_thread_parts {
    void (*new_record)(struct qa_thread *t, uint64_t order);
    void (*new_owner)(struct qa_thread *t);
};
void qa_threads_init(const struct qa_thread_parts *parts); /* once, before any thread registers */
struct qa_thread *qa_thread_register(void);
struct qa_thread *qa_threads_reset_after_fork(void); /* the child's one record */
struct qa_thread *qa_threads_head(void); /* every record, linked by next; walk without locks */

/* ---- private_fd.c: descriptors of the interposer's own, used only while still its own ---- */
bool qa_file_open(struct qa_file *f, const char *path, int flags, mode_t mode);
bool qa_file_openat(struct qa_file *f, int dirfd, const char *name, int flags, mode_t mode);
bool qa_file_still_ours(const struct qa_file *f);
bool qa_file_write_all(struct qa_file *f, const void *data, size_t size);
ssize_t qa_file_read(struct qa_file *f, void *buf, size_t size);
int qa_file_close(struct qa_file *f);
ssize_t qa_file_slurp(const char *path, char *buf, size_t size);
int qa_file_borrow(const struct qa_file *f); /* opened by another thread: usable here, or -1;
                                              * given back with qa_fd_return */

/* ---- fd_table.c: the writer thread's descriptor table of its own, so the numbers it opens
 * never take the program's lowest free one ---- */
bool qa_fd_table_leave(void);       /* the calling thread: true once its table is its own */
void qa_fd_table_stay_shared(void); /* a seccomp filter: no thread leaves the program's table */
int qa_fd_borrow(int program_fd);   /* the program's descriptor, usable on this thread; or -1 */
void qa_fd_return(int borrowed);

/* ---- json.c: a JSON writer into mmap'd memory (no malloc; integers formatted by hand, so it
 * serves a fatal signal's dump) ---- */
QA_CTX_SIGNAL_SAFE void qa_json_release(struct qa_json *j);
QA_CTX_SIGNAL_SAFE void qa_json_raw(struct qa_json *j, const char *s, size_t n);
QA_CTX_SIGNAL_SAFE void qa_json_key(struct qa_json *j, const char *key);
QA_CTX_SIGNAL_SAFE void qa_json_begin_object(struct qa_json *j);
QA_CTX_SIGNAL_SAFE void qa_json_end_object(struct qa_json *j);
QA_CTX_SIGNAL_SAFE void qa_json_begin_array(struct qa_json *j);
QA_CTX_SIGNAL_SAFE void qa_json_end_array(struct qa_json *j);
QA_CTX_SIGNAL_SAFE void qa_json_u64(struct qa_json *j, uint64_t v);
QA_CTX_SIGNAL_SAFE void qa_json_i64(struct qa_json *j, int64_t v);
QA_CTX_SIGNAL_SAFE void qa_json_bool(struct qa_json *j, bool v);
QA_CTX_SIGNAL_SAFE void qa_json_str(struct qa_json *j, const char *s);
QA_CTX_SIGNAL_SAFE void qa_json_strn(struct qa_json *j, const char *s, size_t n);
QA_CTX_SIGNAL_SAFE void qa_json_hex(struct qa_json *j, uintptr_t v);
QA_CTX_SIGNAL_SAFE void qa_json_double(struct qa_json *j, double v);
/* double_text.c: v as %.6g into out[size]; its length. The one reviewed exception to "no printf
 * in a handler" (interpose/tests/handler_link.sh). */
QA_CTX_SIGNAL_SAFE size_t qa_double_text(char *out, size_t size, double v);
/* "frames": ["0x...", ...] */
QA_CTX_SIGNAL_SAFE void qa_json_frames(struct qa_json *j, void *const *frames, int depth);
QA_CTX_SIGNAL_SAFE size_t qa_u64_text(char *out, uint64_t v); /* decimal, NUL-terminated */
/* A line of text without printf: as snprintf into out[size] (cut at size - 1, NUL-terminated). */
struct qa_text {
    char *out;
    size_t size, len;
};
QA_CTX_SIGNAL_SAFE void qa_text_begin(struct qa_text *t, char *out, size_t size);
QA_CTX_SIGNAL_SAFE void qa_text_add(struct qa_text *t, const char *s);
QA_CTX_SIGNAL_SAFE void qa_text_u64(struct qa_text *t, uint64_t v);

/* ---- names.c: names of signals and errors (async-signal-safe: no strerror), and the last
 * ending signal a program's handler took, for the dump ---- */
QA_CTX_SIGNAL_SAFE const char *qa_signal_name(int signo);
QA_CTX_SIGNAL_SAFE const char *qa_error_text(int error);
QA_CTX_SIGNAL_SAFE void qa_note_last_signal(int signo);
QA_CTX_SIGNAL_SAFE const char *qa_last_signal(void); /* NULL when none */

/* ---- lock.c: the dump lock. A futex word holding its holder's tid: a dump writes under it,
 * the timeline appends its points under it, fork holds it across. A handler that finds its own
 * tid there (a crash inside a dump) knows not to wait. ---- */
void qa_dump_lock(void);
void qa_dump_unlock(void);
bool qa_dump_lock_bounded(void); /* false at once for its holder, else after about 5 s */
bool qa_dump_lock_try(void);     /* false at once when anyone holds it */
void qa_dump_lock_reset_after_fork(void);

#endif
