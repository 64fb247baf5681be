/* How far the interposer's start-up has come (qa_ready, enum qa_readiness), the settings' verdict
 * on the fast path, when this process image began (the preload's start, or the fork that made
 * this process) and its executable. Context: any; qa_ready is read on every slow-path call. */
#include <unistd.h>

#include "base.h"

static uint64_t image_start_ns QA_FORK_STATE;

void qa_image_started(void)
{
    image_start_ns = qa_now_ns();
    qa_exe_path(); /* read before any other thread may ask */
}

/* The image's executable, read from /proc/self/exe once: a fork keeps it and an exec starts a
 * new image, so a forked child's dump opens no /proc file for it (a new process's first /proc
 * lookup is one of the dearest calls of a short child's exit). Async-signal-safe. */
const char *qa_exe_path(void)
{
    static char exe[512];
    static atomic_bool known;
    if (!atomic_load_explicit(&known, memory_order_acquire)) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        atomic_store_explicit(&known, true, memory_order_release);
    }
    return exe;
}

uint64_t qa_image_start_ns(void)
{
    return image_start_ns;
}
