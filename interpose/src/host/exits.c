/* The ways a process image ends without running destructors, each interposed so the run is not
 * lost: _exit and _Exit write the final dump (async-signal-safe: programs call _exit from signal
 * handlers and forked children); so does quick_exit, from an at_quick_exit handler run after the
 * program's (it ends in glibc's own _exit, which no preload sees); the exec family writes a dump
 * just before the image is replaced (if the exec fails, the image goes on counting and writes
 * again later). A vfork child shares its parent's memory and account: it writes nothing
 * (qa_dump* check the pid). An image that counted nothing writes no exec dump: a forked child
 * that only calls exec has nothing to tell, and a shell would otherwise leave two files per
 * command.
 * Context: the program's thread that calls _exit, quick_exit or exec, possibly inside a signal
 * handler or a vfork child: async-signal-safe only, no lock but the dump lock, taken for a
 * bounded time. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host.h"

typedef void (*exit_fn)(int);
typedef void (*pthread_exit_fn)(void *);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

extern char **environ;

/* Resolved when first needed, before any dump: dlsym may allocate, which _exit in a signal
 * handler must not do, so qa_exits_resolve runs at start-up too. */
static exit_fn real_exit;
static pthread_exit_fn real_pthread_exit;
static execve_fn real_execve;
static execvpe_fn real_execvpe;
static fexecve_fn real_fexecve;
static execveat_fn real_execveat;

void qa_exits_resolve(void)
{
    real_exit = (exit_fn)dlsym(RTLD_NEXT, "_exit");
    real_pthread_exit = (pthread_exit_fn)dlsym(RTLD_NEXT, "pthread_exit");
    real_execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
    real_execvpe = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
    real_fexecve = (fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
    real_execveat = (execveat_fn)dlsym(RTLD_NEXT, "execveat");
}

static bool counted_anything(void)
{
    struct qa_counters c;
    qa_sum_counters(&c, NULL);
    return qa_counters_allocs(&c) + c.by_call[QA_FREE] + c.reallocs + c.failed != 0;
}

static void before_exec(void)
{
    if (atomic_load(&qa_ready) == 2 && !qa_inert && counted_anything())
        qa_dump(QA_DUMP_EXEC);
}

/* The bodies the preload's own calls reach (_Exit, the execl family), each exported under its
 * name by an alias (types.h, QA_EXPORT_AS): none of them goes through an exported symbol. */
__attribute__((noreturn)) void qa_exit_entry(int status);
int qa_execve_entry(const char *path, char *const argv[], char *const envp[]);
int qa_execvpe_entry(const char *file, char *const argv[], char *const envp[]);

__attribute__((noreturn)) void qa_exit_entry(int status)
{
    if (!qa_inert)
        qa_dump_final(QA_DUMP_EXIT_NOW, 0);
    if (real_exit == NULL)
        qa_exits_resolve();
    if (real_exit != NULL)
        real_exit(status);
    for (;;)
        qa_syscall_entry(SYS_exit_group, status, 0, 0, 0, 0, 0);
}
extern __attribute__((noreturn)) void _exit(int status) QA_EXPORT_AS(qa_exit_entry);

QA_EXPORT __attribute__((noreturn)) void _Exit(int status)
{
    qa_exit_entry(status);
}

/* A main thread that leaves by pthread_exit lets the process live on until its last thread ends,
 * when glibc calls exit(0), unless the writer, counted as one of its threads, is still running:
 * it ends first (output/writer.c). */
QA_EXPORT __attribute__((noreturn)) void pthread_exit(void *value)
{
    if (!qa_inert && atomic_load(&qa_ready) == 2 && gettid() == getpid())
        qa_writer_main_thread_leaving();
    if (real_pthread_exit == NULL)
        qa_exits_resolve();
    real_pthread_exit(value);
    __builtin_unreachable();
}

/* Run by quick_exit after the handlers the program registered, which come later and so run
 * first: the dump counts what they freed. quick_exit may be called from a signal handler. */
static void dump_at_quick_exit(void)
{
    if (!qa_inert)
        qa_dump_final(QA_DUMP_EXIT_NOW, 0);
}

void qa_exits_watch_quick_exit(void)
{
    if (at_quick_exit(dump_at_quick_exit) != 0)
        qa_log("cannot register with at_quick_exit: a quick_exit will leave no dump");
}

int qa_execve_entry(const char *path, char *const argv[], char *const envp[])
{
    before_exec();
    if (real_execve == NULL)
        qa_exits_resolve();
    return real_execve(path, argv, envp);
}
extern int execve(const char *path, char *const argv[], char *const envp[])
    QA_EXPORT_AS(qa_execve_entry);

QA_EXPORT int execv(const char *path, char *const argv[])
{
    return qa_execve_entry(path, argv, environ);
}

int qa_execvpe_entry(const char *file, char *const argv[], char *const envp[])
{
    before_exec();
    if (real_execvpe == NULL)
        qa_exits_resolve();
    return real_execvpe(file, argv, envp);
}
extern int execvpe(const char *file, char *const argv[], char *const envp[])
    QA_EXPORT_AS(qa_execvpe_entry);

QA_EXPORT int execvp(const char *file, char *const argv[])
{
    return qa_execvpe_entry(file, argv, environ);
}

QA_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    before_exec();
    if (real_fexecve == NULL)
        qa_exits_resolve();
    return real_fexecve(fd, argv, envp);
}

QA_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                       int flags)
{
    before_exec();
    if (real_execveat == NULL)
        qa_exits_resolve();
    if (real_execveat == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return real_execveat(dirfd, path, argv, envp, flags);
}

/* The execl family: the arguments gathered into an array on the stack, as glibc does. */
#define GATHER_ARGS(first, ap, argv, with_env, envp)                                               \
    size_t argc = 1;                                                                               \
    va_start(ap, first);                                                                           \
    while (va_arg(ap, const char *) != NULL)                                                       \
        argc++;                                                                                    \
    va_end(ap);                                                                                    \
    char *argv[argc + 1];                                                                          \
    argv[0] = (char *)first;                                                                       \
    va_start(ap, first);                                                                           \
    for (size_t i = 1; i <= argc; i++)                                                             \
        argv[i] = va_arg(ap, char *);                                                              \
    char *const *envp = with_env ? va_arg(ap, char *const *) : environ;                            \
    va_end(ap)

QA_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    GATHER_ARGS(arg, ap, argv, false, envp);
    return qa_execve_entry(path, argv, envp);
}

QA_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    GATHER_ARGS(arg, ap, argv, true, envp);
    return qa_execve_entry(path, argv, envp);
}

QA_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    GATHER_ARGS(arg, ap, argv, false, envp);
    return qa_execvpe_entry(file, argv, envp);
}
