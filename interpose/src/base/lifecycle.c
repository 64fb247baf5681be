/* How far the interposer's start-up has come (qa_ready, enum qa_readiness), the settings' verdict
 * on the fast path, and when this process image began (the preload's start, or the fork that
 * made this process). Context: any; qa_ready is read on every slow-path call. */
#include "base.h"

static uint64_t image_start_ns;

void qa_image_started(void)
{
    image_start_ns = qa_now_ns();
}

uint64_t qa_image_start_ns(void)
{
    return image_start_ns;
}
