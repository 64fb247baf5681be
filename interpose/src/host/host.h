/* The host's events the interposer takes part in: signals (the dump signal, endings, the
 * program's own handlers behind a trampoline), the ways a process image ends (_exit, exec), fork,
 * chroot, the loader (dlopen, dlclose), and libunwind's descriptors. Each file interposes the
 * program's calls of its kind and calls output/, records/ and base/. Files: the .c files of host/.
 * Context: each function's own file says where it runs and what is forbidden there. */
#ifndef QAUDIT_HOST_H
#define QAUDIT_HOST_H

#include "../output/output.h"

/* signals.c: at start-up (and qaudit attach), the dump signal and the handlers of endings the
 * program left alone; at qaudit detach, the program's dispositions back */
void qa_signals_install(void);
void qa_signals_restore(void);

/* attach.c: a module the program loaded, redirected at once after its dlopen (not at the next
 * poll) while attached */
void qa_attach_module_loaded(void);
/* fork.c: no walk of the module list may be cut in two by a fork (its lock stays taken in the
 * child). Whether the lock was taken (an image never attached has none to take); when it was,
 * qa_attach_after_fork releases it in the parent and the child. */
bool qa_attach_before_fork(void);
void qa_attach_after_fork(void);

/* exits.c: _exit, _Exit and the exec family, resolved at start-up (dlsym may allocate); the
 * final dump of a quick_exit, registered from the constructor (never at qaudit attach: a stopped
 * thread of the program may hold the exit handlers' lock) */
void qa_exits_resolve(void);
void qa_exits_watch_quick_exit(void);

/* dlopen_name.c: the file the program's dlopen(file) means, resolved as its caller would (out),
 * or file itself */
const char *qa_dlopen_name(const char *file, const void *caller,
                           bool (*already_loaded)(const char *), char *out, size_t size);

/* fork.c: the pthread_atfork handlers */
void qa_fork_handlers_install(void);

/* chroot.c */
void qa_chroot_resolve(void);

/* seccomp.c: a filter at start-up, or one installed later (prctl), keeps the writer thread on
 * the program's descriptor table */
void qa_seccomp_start(void);

/* unwinder_fds.c: libunwind keeps no descriptor in the host (pipe2, read, syscall) */
void qa_unwinder_fds_init(void);
/* the exported syscall's body: for the host's own last-resort calls (exits.c) */
long qa_syscall_entry(long number, long a0, long a1, long a2, long a3, long a4, long a5);

/* attach.c: qaudit attach, in the process: the modules' GOT entries of the malloc family and
 * qaudit_hook redirected to the preload (restored by the writer thread at detach) */
bool qa_attach_loaded_late(void); /* loaded after the program bound malloc: by qaudit attach */
bool qa_attach_active(void);
int qa_attach_begin(void); /* entries redirected, or -errno */
/* Loaded from a memfd: the link map names the file (QAUDIT_ATTACH_LIBRARY) from now on */
void qa_attach_name_self(const char *settings);
/* qaudit_attach_notes (qaudit/control.h): cleared at each attach, then a line per note */
void qa_attach_notes_clear(void);
__attribute__((format(printf, 1, 2))) void qa_attach_note(const char *fmt, ...);

#endif
