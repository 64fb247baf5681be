/* The preload's control record (qaudit/control.h): the one data symbol it exports, so that
 * `qaudit snapshot` learns the dump signal and paths from the preload itself. Updates are rare
 * (start-up, each finished dump, a claimed signal, fork) and bracketed by an odd generation. */
#include <string.h>
#include <unistd.h>

#include "qaudit/control.h"
#include "state.h"

QA_EXPORT struct qaudit_control qaudit_control;

static void begin_update(void)
{
    __atomic_add_fetch(&qaudit_control.generation, 1, __ATOMIC_RELEASE);
}

static void end_update(void)
{
    __atomic_add_fetch(&qaudit_control.generation, 1, __ATOMIC_RELEASE);
}

static void copy_path(char *dst, const char *src)
{
    size_t n = strlen(src);
    if (n >= QAUDIT_CONTROL_PATH_MAX)
        n = QAUDIT_CONTROL_PATH_MAX - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void qa_control_init(const char *pattern, int signal_number, uint64_t start_time_ns)
{
    begin_update();
    memcpy(qaudit_control.magic, QAUDIT_CONTROL_MAGIC, sizeof QAUDIT_CONTROL_MAGIC);
    qaudit_control.version = QAUDIT_CONTROL_VERSION;
    qaudit_control.pid = (int32_t)getpid();
    qaudit_control.signal_number = signal_number;
    qaudit_control.signal_state = signal_number ? QAUDIT_SIGNAL_ON : QAUDIT_SIGNAL_OFF;
    qaudit_control.start_time_ns = start_time_ns;
    qaudit_control.dumps_written = 0;
    copy_path(qaudit_control.pattern, pattern);
    qaudit_control.last_dump[0] = '\0';
    end_update();
}

void qa_control_signal_state(uint32_t state)
{
    begin_update();
    qaudit_control.signal_state = state;
    end_update();
}

void qa_control_dump_written(const char *path)
{
    begin_update();
    copy_path(qaudit_control.last_dump, path);
    qaudit_control.dumps_written++;
    end_update();
}

void qa_control_after_fork_child(uint64_t start_time_ns)
{
    begin_update();
    qaudit_control.pid = (int32_t)getpid();
    qaudit_control.start_time_ns = start_time_ns;
    qaudit_control.dumps_written = 0;
    qaudit_control.last_dump[0] = '\0';
    end_update();
}
