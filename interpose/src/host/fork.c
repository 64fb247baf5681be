/* fork: no lock of the interposer's may be held across it by a thread the child will not have,
 * and the child starts an account of its own beside what it inherited (inherited.c), with its
 * own writer thread and its own dump files.
 * Context: pthread_atfork handlers, in the forking thread; the child's runs while it is the
 * child's only thread. Lock order as a dump takes them (docs/design.md, "fork"). */
#include <pthread.h>

#include "host.h"

/* Decided once per fork, before it: a detach meanwhile must not leave the handlers unpaired.
 * Beside the other state the handlers write: a page written at every fork is a fault in the
 * parent and one in the child. */
static bool fork_skipped QA_FORK_STATE, attach_held QA_FORK_STATE;

/* Written only when it changes: the pages of this section stay clean in the parent of a fork
 * whose state is the last one's. */
static void remember(bool *flag, bool value)
{
    if (*flag != value)
        *flag = value;
}

static void before_fork(void)
{
    remember(&fork_skipped, qa_inert);
    if (fork_skipped)
        return;
    /* First, while no lock of ours is held: a thread inside dlopen may need any of them. */
    qa_unwinds_block();
    remember(&attach_held, qa_attach_before_fork());
    qa_patterns_hold();
    qa_dump_before_fork();
    qa_blocks_before_fork();
    qa_inherited_before_fork();
    qa_sites_before_fork();
    qa_sampling_before_fork();
}

static void after_fork_parent(void)
{
    if (fork_skipped)
        return;
    qa_unwinds_unblock();
    if (attach_held)
        qa_attach_after_fork();
    qa_blocks_after_fork_parent();
    qa_dump_after_fork_parent();
    qa_patterns_release();
    qa_writer_after_fork_parent();
}

static void after_fork_child(void)
{
    if (fork_skipped)
        return;
    qa_unwinds_unblock();
    if (attach_held)
        qa_attach_after_fork();
    qa_blocks_after_fork_child();
    qa_dump_reset_after_fork();
    qa_patterns_release();
    qa_dump_file_init(true);
    qa_inherited_after_fork_child(); /* before the counters start again from zero */
    qa_stats_reset_after_fork();
    qa_stacks_after_fork_child();
    qa_sampling_after_fork_child(qa_self_if_registered());
    qa_queue_reset_after_fork();
    qa_writer_after_fork_child();
}

void qa_fork_handlers_install(void)
{
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}
