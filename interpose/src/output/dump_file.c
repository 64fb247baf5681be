/* Where a dump goes: QAUDIT_OUT expanded (%p pid, %n sequence, %% percent), written to a private
 * temporary file and then put in place so that no process overwrites another's dump. A process
 * image claims a name the first time it writes there: with link(), which fails if the name
 * exists, so two processes can never both take it. A name that exists already is another
 * process's (a sibling without %p in the pattern, or the image this one exec'd from), unless the
 * file is older than this process, a left-over of an earlier run, which is replaced. Another
 * process's name gets a suffix before the extension: ".<pid>" when the pattern has no %p, then
 * ".<pid>.<k>" (or ".<k>" with %p).
 * The plain name is the last image's of its process: an image's dump just before an exec starts
 * one suffix further, so that the program a shim or a script exec'd at the end holds it. Without
 * %p in the pattern, the plain name is the process's that `qaudit run` started
 * (QAUDIT_PROGRAM_PID); every other process starts at ".<pid>", its own exec'd programs
 * included (a shim's readlink or basename never takes the run's name).
 * Without %n in the pattern, the image's last dump (exit, _exit, a fatal signal, exec) takes the
 * name; a snapshot (`qaudit snapshot`, the dump signal) takes ".snapshot-<sequence>" before the
 * extension, so no later dump replaces it; interval dumps take ".interval" and replace their own,
 * so that a long run keeps one file, not thousands.
 * When the directory refuses the file (a process that dropped its privileges, a directory gone),
 * the dump goes to the fallback directory (QAUDIT_FALLBACK_DIR, /tmp by default) as
 * "qaudit-fallback-[<run id>-]<name>", where `qaudit run` and `qaudit report` find it.
 * Everything here is async-signal-safe: a dump may be written from a fatal signal handler.
 * Context: as dump.c's: any that writes a dump, fatal signal handlers included. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "qaudit/control.h"

#define MAX_SUFFIXES 1000

/* This image's process (a forked child's after the fork); whether the image is a forked child
 * of the one that loaded us; the process's start (CLOCK_REALTIME), kept across exec. */
static pid_t image_pid QA_FORK_STATE;
static bool forked QA_FORK_STATE;
static uint64_t process_start_ns QA_FORK_STATE;
/* The names a dump's file goes by, on one page: a forked child that lives a millisecond writes
 * each of them in its exit dump, and every page written there is a fault (docs/design.md,
 * "Forks cost little"). Names are short, so only their first bytes are touched. */
static struct {
    char tmp[QA_PATH_MAX + 64];    /* the temporary file being written */
    char path[QA_PATH_MAX];        /* where the dump was placed */
    char claimed_for[QA_PATH_MAX]; /* the expanded path this image claimed last ... */
    char claimed_as[QA_PATH_MAX];  /* ... and the name it got */
} names __attribute__((aligned(4096)));
/* The two claimed_ names hold a claim. */
static bool claimed QA_FORK_STATE;
/* What the pattern holds, found once (strstr was a page of the C library's code faulted in by
 * every forked child's exit dump). */
static bool pattern_has_pid QA_FORK_STATE, pattern_has_sequence QA_FORK_STATE;

/* The process's start from /proc/self/stat (clock ticks since boot), on the real-time clock.
 * Unlike the preload's own start, it stays the same across exec. */
static uint64_t read_process_start(void)
{
    char stat[1024];
    if (qa_file_slurp("/proc/self/stat", stat, sizeof stat) <= 0)
        return 0;
    const char *p = strrchr(stat, ')'); /* the command name may hold spaces and parentheses */
    for (int field = 2; p != NULL && field < 22; field++)
        p = strchr(p + 1, ' ');
    if (p == NULL)
        return 0;
    uint64_t ticks = 0;
    for (p++; *p >= '0' && *p <= '9'; p++)
        ticks = ticks * 10 + (uint64_t)(*p - '0');
    long hz = sysconf(_SC_CLK_TCK);
    struct timespec real, boot;
    clock_gettime(CLOCK_REALTIME, &real);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    int64_t boot_at =
        ((int64_t)real.tv_sec - boot.tv_sec) * 1000000000 + real.tv_nsec - boot.tv_nsec;
    return (uint64_t)(boot_at + (int64_t)(ticks * (1000000000u / (uint64_t)(hz > 0 ? hz : 100))));
}

void qa_dump_file_init(bool after_fork)
{
    image_pid = getpid();
    forked = after_fork;
    /* A forked child started just now: no need to read /proc for it. */
    process_start_ns = after_fork ? qa_now_ns() : read_process_start();
    claimed = false;
    if (!after_fork) {
        pattern_has_pid = strstr(qa_cfg.out_pattern, "%p") != NULL;
        pattern_has_sequence = strstr(qa_cfg.out_pattern, "%n") != NULL;
    }
}

bool qa_dump_file_is_image_process(void)
{
    return getpid() == image_pid;
}

static bool append(char *out, size_t size, size_t *len, const char *text)
{
    size_t n = strlen(text);
    if (*len + n >= size)
        return false;
    memcpy(out + *len, text, n + 1);
    *len += n;
    return true;
}

/* The pattern with %p, %n and %% expanded; false if it does not fit. */
static bool expand(char *out, size_t size, uint64_t sequence)
{
    size_t len = 0;
    out[0] = '\0';
    char number[24];
    for (const char *p = qa_cfg.out_pattern; *p; p++) {
        const char *piece = number;
        if (p[0] == '%' && p[1] == 'p')
            qa_u64_text(number, (uint64_t)image_pid), p++;
        else if (p[0] == '%' && p[1] == 'n')
            qa_u64_text(number, sequence), p++;
        else if (p[0] == '%' && p[1] == '%')
            piece = "%", p++;
        else
            number[0] = *p, number[1] = '\0';
        if (!append(out, size, &len, piece))
            return false;
    }
    return true;
}

/* The file operations of a dump, relative to a directory held across a chroot (dump_dirs.c;
 * giving the directory back keeps errno). */
static int path_link(const char *from, const char *to)
{
    int from_dir, to_dir;
    const char *from_name, *to_name;
    qa_dump_dirs_locate(from, &from_dir, &from_name);
    qa_dump_dirs_locate(to, &to_dir, &to_name);
    int result = linkat(from_dir, from_name, to_dir, to_name, 0);
    qa_dump_dirs_done(from_dir);
    qa_dump_dirs_done(to_dir);
    return result;
}

static int path_rename(const char *from, const char *to)
{
    int from_dir, to_dir;
    const char *from_name, *to_name;
    qa_dump_dirs_locate(from, &from_dir, &from_name);
    qa_dump_dirs_locate(to, &to_dir, &to_name);
    int result = renameat(from_dir, from_name, to_dir, to_name);
    qa_dump_dirs_done(from_dir);
    qa_dump_dirs_done(to_dir);
    return result;
}

static int path_unlink(const char *path)
{
    int dir;
    const char *name;
    qa_dump_dirs_locate(path, &dir, &name);
    int result = unlinkat(dir, name, 0);
    qa_dump_dirs_done(dir);
    return result;
}

static int path_lstat(const char *path, struct stat *st)
{
    int dir;
    const char *name;
    qa_dump_dirs_locate(path, &dir, &name);
    int result = fstatat(dir, name, st, AT_SYMLINK_NOFOLLOW);
    qa_dump_dirs_done(dir);
    return result;
}

static bool path_create(struct qa_file *f, const char *path)
{
    int dir;
    const char *name;
    qa_dump_dirs_locate(path, &dir, &name);
    bool created = qa_file_openat(f, dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    qa_dump_dirs_done(dir);
    return created;
}

/* path with suffix inserted before its extension (the last '.' of the file name, not its first
 * character), or appended when there is none. */
static bool with_suffix(char *out, size_t size, const char *path, const char *suffix)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    const char *dot = strrchr(name, '.');
    size_t stem = dot && dot != name ? (size_t)(dot - path) : strlen(path);
    size_t n = strlen(suffix), rest = strlen(path + stem);
    if (stem + n + rest >= size)
        return false;
    memmove(out, path, stem);
    memcpy(out + stem, suffix, n);
    memcpy(out + stem + n, path + stem, rest + 1);
    return true;
}

/* The k-th name to try for expanded (k = 0: itself). */
static bool candidate(char *out, size_t size, const char *expanded, unsigned k)
{
    if (k == 0) {
        if (strlen(expanded) >= size)
            return false;
        memcpy(out, expanded, strlen(expanded) + 1);
        return true;
    }
    char suffix[48], number[24];
    size_t len = 0;
    suffix[0] = '\0';
    if (!pattern_has_pid) {
        qa_u64_text(number, (uint64_t)image_pid);
        append(suffix, sizeof suffix, &len, ".");
        append(suffix, sizeof suffix, &len, number);
    }
    unsigned index = pattern_has_pid ? k : k - 1;
    if (index > 0) {
        qa_u64_text(number, index);
        append(suffix, sizeof suffix, &len, ".");
        append(suffix, sizeof suffix, &len, number);
    }
    return with_suffix(out, size, expanded, suffix);
}

/* A file at path that predates this process: a left-over of an earlier run. One second of
 * margin: the start time is known to a clock tick, and a doubt keeps the other file. */
static bool left_over(const char *path)
{
    struct stat st;
    if (path_lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || process_start_ns == 0)
        return false;
    uint64_t modified = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    return modified + 1000000000u < process_start_ns;
}

/* The first name an image tries for a dump of kind: the plain name (k = 0) is, with %p in the
 * pattern, each process's, and without it the process's that qaudit run started (or, when no
 * run says which, any but a forked child's); in either process the image's last before an exec
 * starts one further, leaving it to the image after it. */
static unsigned first_candidate(enum qa_dump_kind kind)
{
    unsigned k = pattern_has_pid          ? 0
                 : qa_cfg.program_pid > 0 ? image_pid != (pid_t)qa_cfg.program_pid
                                          : forked;
    return k + (kind == QA_DUMP_KIND_EXEC);
}

/* Puts tmp in place under a name this image may use; the name in out. */
static bool claim(const char *tmp, const char *expanded, enum qa_dump_kind kind, char *out,
                  size_t size)
{
    for (unsigned k = first_candidate(kind); k < MAX_SUFFIXES; k++) {
        if (!candidate(out, size, expanded, k))
            return false;
        if (path_link(tmp, out) == 0) {
            path_unlink(tmp);
            return true;
        }
        if (errno == EEXIST) {
            if (left_over(out) && path_rename(tmp, out) == 0)
                return true;
            continue;
        }
        /* No hard links on this file system: take the name if it is free, or a left-over. */
        struct stat st;
        if ((path_lstat(out, &st) != 0 || left_over(out)) && path_rename(tmp, out) == 0)
            return true;
    }
    errno = EEXIST;
    return false;
}

/* The temporary file's name for attempt try: "<expanded>.tmp.<pid>.<n>[.try]". */
static bool temporary_name(const char *expanded, uint64_t sequence, unsigned try, char *tmp,
                           size_t size)
{
    char number[24];
    size_t len = 0;
    tmp[0] = '\0';
    bool fits = append(tmp, size, &len, expanded) && append(tmp, size, &len, ".tmp.");
    qa_u64_text(number, (uint64_t)image_pid);
    fits = fits && append(tmp, size, &len, number) && append(tmp, size, &len, ".");
    qa_u64_text(number, sequence);
    fits = fits && append(tmp, size, &len, number);
    if (fits && try > 0) {
        qa_u64_text(number, try);
        fits = append(tmp, size, &len, ".") && append(tmp, size, &len, number);
    }
    return fits;
}

/* Writes the rendered dump to a new temporary file (its path in tmp). The descriptor lives for a
 * few system calls; if the program takes it meanwhile, the half-written file is removed and the
 * write tried again under another name, a few times. */
static bool write_temporary(const char *expanded, uint64_t sequence, const char *data, size_t size,
                            char *tmp, size_t tmp_size)
{
    for (unsigned try = 0; try < 8; try++) {
        if (!temporary_name(expanded, sequence, try, tmp, tmp_size)) {
            errno = ENAMETOOLONG;
            return false;
        }
        struct qa_file f;
        if (!path_create(&f, tmp)) {
            if (errno != EBADF)
                return false;
            path_unlink(tmp); /* created, but the descriptor was the program's when we looked */
            continue;
        }
        bool ok = qa_file_write_all(&f, data, size);
        int error = errno;
        if (qa_file_close(&f) != 0 && ok) {
            ok = false;
            error = errno;
        }
        if (ok)
            return true;
        path_unlink(tmp);
        if (error != EBADF) {
            errno = error;
            return false;
        }
    }
    errno = EBADF;
    return false;
}

/* Moves the finished temporary file into place under this image's name for expanded. */
static bool put_in_place(const char *tmp, const char *expanded, enum qa_dump_kind kind, char *out,
                         size_t size)
{
    if (claimed && strcmp(expanded, names.claimed_for) == 0) {
        if (strlen(names.claimed_as) >= size || path_rename(tmp, names.claimed_as) != 0)
            return false;
        memcpy(out, names.claimed_as, strlen(names.claimed_as) + 1);
        return true;
    }
    if (!claim(tmp, expanded, kind, out, size))
        return false;
    memcpy(names.claimed_for, expanded, strlen(expanded) + 1);
    if (strlen(out) < sizeof names.claimed_as)
        memcpy(names.claimed_as, out, strlen(out) + 1);
    claimed = true;
    return true;
}

/* The name for a dump of kind without %n in the pattern (see the top of this file). */
static bool name_for(char *out, size_t size, const char *expanded, enum qa_dump_kind kind,
                     uint64_t sequence)
{
    if (kind == QA_DUMP_KIND_FINAL || kind == QA_DUMP_KIND_EXEC || pattern_has_sequence) {
        if (strlen(expanded) >= size)
            return false;
        memcpy(out, expanded, strlen(expanded) + 1);
        return true;
    }
    char suffix[48] = ".interval", number[24];
    if (kind == QA_DUMP_KIND_SNAPSHOT) {
        size_t len = 0;
        suffix[0] = '\0';
        qa_u64_text(number, sequence);
        append(suffix, sizeof suffix, &len, ".snapshot-");
        append(suffix, sizeof suffix, &len, number);
    }
    return with_suffix(out, size, expanded, suffix);
}

/* The fallback's path for a dump meant for path: the fallback directory, and path's last part
 * behind the prefix that marks it (and the run it belongs to). */
static bool fallback_for(char *out, size_t size, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = 0;
    out[0] = '\0';
    bool fits = append(out, size, &len, qa_cfg.fallback_dir) && append(out, size, &len, "/") &&
                append(out, size, &len, QAUDIT_FALLBACK_PREFIX);
    if (fits && qa_cfg.run_id[0] != '\0')
        fits = append(out, size, &len, qa_cfg.run_id) && append(out, size, &len, "-");
    return fits && append(out, size, &len, base);
}

/* Errors of a directory that will not take the file, where the fallback may: a process that
 * dropped its privileges or changed its root, a directory removed or made read-only. */
static bool refused(int error)
{
    return error == EACCES || error == EPERM || error == EROFS || error == ENOENT ||
           error == ENOTDIR;
}

static enum qa_dump_file_result put_at(const char *target, enum qa_dump_kind kind,
                                       uint64_t sequence, const char *data, size_t size, char *tmp,
                                       size_t tmp_size, char *path, size_t path_size)
{
    if (!write_temporary(target, sequence, data, size, tmp, tmp_size))
        return QA_DUMP_FILE_NOT_WRITTEN;
    if (!put_in_place(tmp, target, kind, path, path_size)) {
        int error = errno;
        path_unlink(tmp);
        errno = error;
        return QA_DUMP_FILE_NOT_PLACED;
    }
    return QA_DUMP_FILE_PLACED;
}

/* Writes dump number sequence and puts it in place: its final path in path, or, on failure,
 * the temporary file's in tmp (removed) with errno set. */
enum qa_dump_file_result qa_dump_file_put(uint64_t sequence, enum qa_dump_kind kind,
                                          const char *data, size_t size, const char **tmp_name,
                                          const char **path_name)
{
    char *tmp = names.tmp, *path = names.path;
    size_t tmp_size = sizeof names.tmp, path_size = sizeof names.path;
    char expanded[QA_PATH_MAX], target[QA_PATH_MAX];
    *tmp_name = tmp;
    *path_name = path;
    tmp[0] = '\0';
    if (!expand(expanded, sizeof expanded, sequence) ||
        !name_for(target, sizeof target, expanded, kind, sequence)) {
        errno = ENAMETOOLONG;
        return QA_DUMP_FILE_NOT_WRITTEN;
    }
    enum qa_dump_file_result result =
        put_at(target, kind, sequence, data, size, tmp, tmp_size, path, path_size);
    if (result == QA_DUMP_FILE_PLACED || !refused(errno) ||
        !fallback_for(expanded, sizeof expanded, target))
        return result;
    int error = errno;
    char first_tmp[QA_PATH_MAX];
    size_t n = strlen(tmp) < sizeof first_tmp ? strlen(tmp) : sizeof first_tmp - 1;
    memcpy(first_tmp, tmp, n);
    first_tmp[n] = '\0';
    result = put_at(expanded, kind, sequence, data, size, tmp, tmp_size, path, path_size);
    if (result != QA_DUMP_FILE_PLACED) { /* the first refusal is the one to report */
        memcpy(tmp, first_tmp, n + 1);
        errno = error;
    }
    return result;
}

/* Before the process changes its root: the directories its dumps go to, kept (dump_dirs.c). */
void qa_dump_file_hold_directories(void)
{
    char expanded[QA_PATH_MAX], fallback[QA_PATH_MAX];
    if (expand(expanded, sizeof expanded, 0))
        qa_dump_dirs_hold(expanded);
    if (fallback_for(fallback, sizeof fallback, "x"))
        qa_dump_dirs_hold(fallback);
}
