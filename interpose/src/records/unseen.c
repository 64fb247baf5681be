/* What the interposer cannot see by interposing malloc, taken at start-up and written in each
 * dump's precision object: other allocators' own entry points (allocators.c, extra.c),
 * allocators no interposing reaches (unreachable.c) and anonymous memory the counted bytes do
 * not explain (memory.c).
 * Context: start-up and dumps. */
#include <pthread.h>

#include "records.h"

static void after_fork_child(void)
{
    qa_extra_reset_after_fork();
}

/* Called once by initialise(), before counting starts. */
void qa_unseen_start(bool attached)
{
    qa_memory_start();
    qa_allocators_detect(attached);
    qa_unreachable_detect(attached);
    pthread_atfork(NULL, NULL, after_fork_child);
}

/* The fields; false when something was not seen, which makes precision.exact false. */
bool qa_unseen_write(struct qa_json *j)
{
    bool allocators_seen = qa_allocators_write(j);
    bool all_reached = qa_unreachable_write(j);
    bool memory_explained = qa_memory_write(j);
    return allocators_seen && all_reached && memory_explained;
}
