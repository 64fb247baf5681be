/* The preload's control record (qaudit/control.h): the one data symbol it exports, so that
 * `qaudit snapshot` learns the dump paths from the preload itself and asks it for a dump by
 * writing a request into it. Updates are rare (start-up, each dump, a claimed signal, fork) and
 * bracketed by an odd generation.
 * Context: any thread, signal handlers included (updates block every signal meanwhile). */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "qaudit/control.h"
#include "output.h"

/* The preload writes its own record through a hidden name: a reference to the exported name
 * would bind to the first definition in the process, and with two preloads loaded (builds side by
 * side) both would write into one record. The exported name is an alias of the same storage. */
static struct qaudit_control record QA_FORK_STATE;
extern struct qaudit_control qaudit_control __attribute__((alias("record"), visibility("default")));

/* Writers exclude each other through the generation itself (even to odd by CAS), with every
 * signal blocked meanwhile: a fatal signal's dump may update the record from a handler, and must
 * not find its own thread half-way through an update. */
static void block_every_signal(sigset_t *saved)
{
    /* Every bit set, as sigfillset gives (pthread_sigmask leaves glibc's own signals alone):
     * sigfillset's code is a page of the C library every forked child would fault in. */
    sigset_t all;
    memset(&all, 0xff, sizeof all);
    pthread_sigmask(SIG_BLOCK, &all, saved);
}

static void begin_update(sigset_t *saved)
{
    block_every_signal(saved);
    uint32_t g = __atomic_load_n(&record.generation, __ATOMIC_RELAXED);
    for (;;) {
        if (g % 2 == 0 && __atomic_compare_exchange_n(&record.generation, &g, g + 1, false,
                                                      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return;
        g = __atomic_load_n(&record.generation, __ATOMIC_RELAXED);
    }
}

static void end_update(const sigset_t *saved)
{
    __atomic_add_fetch(&record.generation, 1, __ATOMIC_RELEASE);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

static void copy_path(char *dst, const char *src)
{
    size_t n = strlen(src);
    if (n >= QAUDIT_CONTROL_PATH_MAX)
        n = QAUDIT_CONTROL_PATH_MAX - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void qa_control_init(const char *pattern, const char *run_id, int signal_number,
                     uint64_t start_time_ns)
{
    sigset_t saved;
    begin_update(&saved);
    memcpy(record.magic, QAUDIT_CONTROL_MAGIC, sizeof QAUDIT_CONTROL_MAGIC);
    record.version = QAUDIT_CONTROL_VERSION;
    record.pid = (int32_t)getpid();
    record.signal_number = signal_number;
    record.signal_state = signal_number ? QAUDIT_SIGNAL_ON : QAUDIT_SIGNAL_OFF;
    record.start_time_ns = start_time_ns;
    record.dumps_written = 0;
    copy_path(record.pattern, pattern);
    memset(record.run_id, 0, sizeof record.run_id);
    memcpy(record.run_id, run_id, strnlen(run_id, sizeof record.run_id - 1));
    record.last_dump[0] = '\0';
    record.writer_state = QAUDIT_WRITER_STARTING;
    record.poll_ms = QA_REQUEST_POLL_MS;
    end_update(&saved);
}

void qa_control_writer_state(uint32_t state)
{
    sigset_t saved;
    begin_update(&saved);
    record.writer_state = state;
    end_update(&saved);
}

/* The token of a request (a dump's, a detach's) not served yet, or 0. The tool writes it with one
 * 8-byte copy; it is read twice, so that a torn read is not taken for a request. */
static uint64_t pending(const uint64_t *request_field, const uint64_t *served_field)
{
    uint64_t request = __atomic_load_n(request_field, __ATOMIC_ACQUIRE);
    if (request == __atomic_load_n(served_field, __ATOMIC_RELAXED))
        return 0;
    return request == __atomic_load_n(request_field, __ATOMIC_ACQUIRE) ? request : 0;
}

static void set_served(uint64_t *served_field, uint64_t request)
{
    sigset_t saved;
    begin_update(&saved);
    *served_field = request;
    end_update(&saved);
}

uint64_t qa_control_pending_request(void)
{
    return pending(&record.request, &record.served);
}

void qa_control_request_served(uint64_t request)
{
    set_served(&record.served, request);
}

/* Why the last dump failed, for `qaudit snapshot` to pass on (async-signal-safe). */
void qa_control_dump_failed(const char *reason)
{
    sigset_t saved;
    begin_update(&saved);
    size_t n = strlen(reason);
    if (n >= sizeof record.last_error)
        n = sizeof record.last_error - 1;
    memcpy(record.last_error, reason, n);
    record.last_error[n] = '\0';
    record.failures++;
    end_update(&saved);
}

void qa_control_signal_state(uint32_t state)
{
    sigset_t saved;
    begin_update(&saved);
    record.signal_state = state;
    end_update(&saved);
}

void qa_control_dump_written(const char *path)
{
    sigset_t saved;
    begin_update(&saved);
    copy_path(record.last_dump, path);
    record.dumps_written++;
    end_update(&saved);
}

/* The attach's state (qaudit attach, detach: host/attach.c), and the entries redirected. */
void qa_control_attach_state(uint32_t state, uint64_t attached_at_ns, uint32_t redirected)
{
    sigset_t saved;
    begin_update(&saved);
    record.attach_state = state;
    record.attached_at_ns = attached_at_ns;
    record.redirected = redirected;
    end_update(&saved);
}

uint64_t qa_control_pending_detach(void)
{
    return pending(&record.detach_request, &record.detach_served);
}

void qa_control_detach_served(uint64_t request)
{
    set_served(&record.detach_served, request);
}

void qa_control_after_fork_child(uint64_t start_time_ns, uint32_t writer_state)
{
    /* The child's only thread: an update another thread had under way at the fork will never
     * end, so the generation is made odd here rather than waited for. */
    sigset_t saved;
    block_every_signal(&saved);
    __atomic_store_n(&record.generation, record.generation | 1u, __ATOMIC_RELEASE);
    record.pid = (int32_t)getpid();
    record.start_time_ns = start_time_ns;
    record.dumps_written = 0;
    record.last_dump[0] = '\0';
    record.failures = 0;
    record.last_error[0] = '\0';
    record.writer_state = writer_state;
    end_update(&saved);
}
