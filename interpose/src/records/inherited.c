/* What a forked child inherited at its fork, kept apart from what it does itself: the blocks and
 * bytes live in the parent then (its own and what it still held of its own inheritance), the
 * parent's identity, and a new fork generation, so that sites (sites.c) and tracked blocks
 * (blocks.c) tell the parent's counts from the child's, and owned.c tells inherited blocks from
 * the child's own at every free. The child's totals then count only its own calls, a merge of a
 * process tree counts every allocation once, and no figure of a dump is negative. The figures
 * (qa_inherited) are totals.c's, where the live bytes and the peak are summed from them.
 * Context: the fork handlers (the parent's before the fork, the child's after it, with the child's
 * only thread); nothing here allocates. */
#include <string.h>
#include <unistd.h>

#include "records.h"

uint16_t qa_fork_generation QA_FORK_STATE;

/* Taken in the parent just before the fork: who the child's parent is. */
static int32_t forking_pid QA_FORK_STATE;
static uint64_t forking_start_ns QA_FORK_STATE;

bool qa_is_attached_image(void)
{
    return qa_inherited.attached_at_ns != 0;
}

/* The attach (host/attach.c): from now on every counted block is marked as the image's own, and
 * a free of an unmarked one is of a block from before. A second attach starts afresh. */
void qa_inherited_attach(uint64_t now_ns)
{
    qa_inherited.blocks = 0;
    qa_inherited.bytes = 0;
    qa_inherited.attached_at_ns = now_ns;
    qa_inherited.entries_left_alone = 0;
    qa_owned_before_fork();      /* the map's table */
    qa_owned_reset_after_fork(); /* zeroes what an earlier attach used */
}

bool qa_is_forked_child(void)
{
    return qa_fork_generation != 0;
}

void qa_inherited_before_fork(void)
{
    forking_pid = (int32_t)getpid();
    forking_start_ns = qa_image_start_ns();
    qa_owned_before_fork();
}

/* The parent's figures at the fork, summed over every thread record (the parent's other threads'
 * records are still linked here: they are dropped after this). */
void qa_inherited_after_fork_child(void)
{
    struct qa_counters c;
    qa_sum_counters(&c, NULL);
    /* Never below zero: a free of a block no call counted (made under the re-entrancy guard)
     * must not make the child start in debt; precision.frees_uncounted says so in the parent. */
    int64_t blocks = qa_live_blocks_total(&c), bytes = qa_live_bytes_total(&c);
    qa_inherited.blocks = blocks > 0 ? blocks : 0;
    qa_inherited.bytes = bytes > 0 ? bytes : 0;
    qa_inherited.parent_peak = qa_peak_live();
    qa_inherited.parent_pid = forking_pid;
    qa_inherited.parent_start_ns = forking_start_ns;
    qa_sites_flush_all(); /* pending site counts are the parent's */
    if (qa_fork_generation < UINT16_MAX - 1)
        qa_fork_generation++;
    qa_owned_reset_after_fork();
    struct qa_thread *self = qa_self_if_registered();
    if (self != NULL && qa_owned_tracking) /* the child's only thread leaves the fast path */
        self->gate |= QA_GATE_FORKED;
}
