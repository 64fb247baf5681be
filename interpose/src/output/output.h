/* The interposer's output: the dump (rendered without malloc, written async-signal-safely for the
 * last one), its file and name, the directories it goes to, the control record `qaudit snapshot`
 * reads and writes requests into, and the writer thread. Calls base/ and records/. Files:
 * the .c files of output/.
 * Context: each function's own file says where it runs and what is forbidden there. */
#ifndef QAUDIT_OUTPUT_H
#define QAUDIT_OUTPUT_H

#include "../records/records.h"

/* ---- dump.c: when a dump is written, under the dump lock (base/lock.c). qa_dump: any thread,
 * not a signal handler (it gathers the module map, taking the loader's lock first). qa_dump_final:
 * async-signal-safe, once per image (_exit, a fatal signal). ---- */
QA_CTX_WRITER void qa_dump(enum qa_dump_reason reason);
QA_CTX_SIGNAL_SAFE void qa_dump_final(enum qa_dump_reason reason, int signo);
QA_CTX_SIGNAL_SAFE bool qa_dump_in_handler(enum qa_dump_reason reason); /* never waits */
void qa_dump_note_deepbind(const char *path);
void qa_dump_before_fork(void);
void qa_dump_after_fork_parent(void);
void qa_dump_reset_after_fork(void);

/* ---- dump_render.c: the dump's JSON, section by section (the caller holds the dump lock) ---- */
QA_CTX_SIGNAL_SAFE void qa_dump_render(struct qa_json *j, enum qa_dump_reason reason, int signo,
                                       const struct qa_module_list *modules, uint64_t sequence);
bool qa_dump_is_final(enum qa_dump_reason reason); /* the image's last: exit, _exit, fatal */
const char *qa_dump_reason_name(enum qa_dump_reason reason); /* as the dump's reason says */
const char *qa_stacks_name(enum qa_stacks mode); /* as config.stacks says: "off", "sampled"... */

/* ---- dump_file.c: dump names, claimed so that processes never overwrite each other's dumps;
 * the fallback directory. Async-signal-safe. ---- */
void qa_dump_file_init(bool after_fork);
bool qa_dump_file_is_image_process(void);
/* tmp_name, path_name: the temporary file's name and the dump's place (empty when none). */
enum qa_dump_file_result qa_dump_file_put(uint64_t sequence, enum qa_dump_kind kind,
                                          const char *data, size_t size, const char **tmp_name,
                                          const char **path_name);
void qa_dump_file_hold_directories(void); /* before a chroot */

/* ---- dump_dirs.c: the dump directories, reachable after a chroot ---- */
void qa_dump_dirs_hold(const char *path_in_it);
void qa_dump_dirs_locate(const char *path, int *dirfd, const char **name);
void qa_dump_dirs_done(int dirfd); /* after each use of what qa_dump_dirs_locate gave */

/* ---- control.c: the record `qaudit snapshot` reads and writes requests into
 * (qaudit/control.h). Any thread, signal handlers included (updates block every signal). ---- */
#define QA_REQUEST_POLL_MS 100 /* the writer thread reads the record's request this often */
void qa_control_init(const char *pattern, const char *run_id, int signal_number,
                     uint64_t start_time_ns);
void qa_control_signal_state(uint32_t state);
void qa_control_dump_written(const char *path);
void qa_control_after_fork_child(uint64_t start_time_ns, uint32_t writer_state);
void qa_control_writer_state(uint32_t state);
uint64_t qa_control_pending_request(void); /* 0: none */
void qa_control_request_served(uint64_t request);
void qa_control_dump_failed(const char *reason);
void qa_control_attach_state(uint32_t state, uint64_t attached_at_ns, uint32_t redirected);
uint64_t qa_control_pending_detach(void); /* 0: none */
void qa_control_detach_served(uint64_t request);

/* ---- dump_render.c: the lazy writer's state, as the dump's timeline_writer gives it (whether
 * the writer thread runs, since when: docs/dump-format.md). writer.c keeps it; dump_render.c
 * renders it, and so calls nothing in writer.c. ---- */
struct qa_writer_state {
    _Atomic bool ended_for_good; /* at the main thread's pthread_exit: never starts again */
    /* CLOCK_REALTIME: when the writer last started and when it ended or failed to start (0:
     * not) */
    uint64_t started_at_ns, stopped_at_ns;
    bool failed;             /* stopped_at_ns: when it could not start */
    _Atomic bool has_forked; /* the image has forked a child: it keeps one thread */
};
extern struct qa_writer_state qa_writer_state;

/* ---- writer.c: the writer thread (every signal blocked; woken through a futex, and every
 * 100 ms to read the control record's request) and the dump at exit ---- */
/* attached: started by qaudit attach, whose poll needs the thread from the start. */
void qa_writer_start(bool attached);
QA_CTX_SIGNAL_SAFE void qa_writer_wake(void);
void qa_writer_after_fork_child(void);
void qa_writer_after_fork_parent(void); /* it keeps one thread from then on, for the time alone */
/* The lazy writer (writer.c, "lazily"): when it is due to start (CLOCK_MONOTONIC; 0: at once, a
 * dump signal or a request, threads of the program's; UINT64_MAX: it runs, it never will, or only
 * for those: the image has forked);
 * whether an allocation called from caller (outside the C library and the loader) should start
 * it now; its start, 0 or -EAGAIN (from an allocation's look, and through ptrace:
 * entry/writer_start.c). */
uint64_t qa_writer_due_at(void);
void qa_writer_note_thread(void); /* a thread's record has a new owner */
bool qa_writer_due_now(uintptr_t caller);
int qa_writer_start_lazy(void);
/* The main thread is leaving by pthread_exit (host/exits.c): the writer ends, for good, before it
 * does. glibc ends the process when its last thread ends, counting the writer among them, so a
 * writer still running then would keep the process alive after the program's last thread. */
void qa_writer_main_thread_leaving(void);
/* qaudit attach: the writer thread calls poll at every wake (modules loaded since the attach),
 * and on the control record's detach request calls restore (every entry point put back), writes
 * the last dump, marks the request served and ends. Set before the writer starts. */
void qa_writer_attached(void (*poll)(void), void (*restore)(void));

/* ---- looks.c: a thread's look at the lazy writer and the timeline, every so many of its
 * counted allocations (QA_GATE_LOOK). Context: the thread's own allocation call, outside
 * the guard; the new owner's and the fork's with the record's owner. ---- */
void qa_look(struct qa_thread *t, uintptr_t caller);
/* The look of a call its thread's countdown marked, made where the caller is known (the lazy
 * writer starts only from a call made outside the C library and the loader, whose own may hold
 * a lock pthread_create takes); never under the guard: the interposer's own allocations
 * (libunwind's, the writer's start) start nothing. */
static inline void qa_look_if_marked(struct qa_thread *t, const void *caller)
{
    if ((t->gate & (QA_GATE_LOOK | QA_GATE_BUSY)) == QA_GATE_LOOK)
        qa_look(t, (uintptr_t)caller);
}
void qa_look_new_owner(struct qa_thread *t);

#endif
