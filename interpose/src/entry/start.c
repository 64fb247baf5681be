/* Start-up: the first call (or the constructor) resolves the next allocator, loads the settings
 * and sets up every part, in the order their dependencies ask; then the interposer is ready and
 * counting starts. Context: the constructor, or the first allocation of any thread (dlsym may
 * allocate meanwhile: the bootstrap arena serves it); qa_ready_now on every slow-path call. */
#include <errno.h>
#include <stdio.h>

#include "../host/host.h"
#include "../output/output.h"
#include "../records/records.h"
#include "entry.h"

/* A record's new owner: the records' state of its calls, and its first look (output/looks.c). */
static void new_owner(struct qa_thread *t)
{
    qa_records_new_owner(t);
    qa_look_new_owner(t);
}

/* What the parts keep in each thread record (base/threads.c sets records up through these). */
static const struct qa_thread_parts record_parts = {qa_records_new_record, new_owner};

/* Whether the settings leave every call to the fast path (base.h, qa_fast_path). */
static bool settings_allow_fast_path(void)
{
    bool stacks_rare = qa_cfg.stacks == QA_STACKS_OFF ||
                       ((qa_cfg.stacks == QA_STACKS_SAMPLED || qa_cfg.stacks == QA_STACKS_QUEUE) &&
                        qa_cfg.sites[0] == '\0');
    return stacks_rare && qa_cfg.poison == QA_POISON_OFF && qa_cfg.fail_mode == QA_FAIL_NONE &&
           qa_usable_from_header;
}

/* Resolves the next allocator, loads the settings and sets up every part: once, on the first
 * call (or the constructor), or at qaudit attach (attached: the settings come from the command,
 * not the environment; no signal handler is installed in a program that did not start under
 * the preload, so on-demand dumps go through the control record only). */
static bool start_parts(bool attached, const char *settings)
{
    int expected = QA_NOT_STARTED;
    if (!atomic_compare_exchange_strong(&qa_ready, &expected, QA_STARTING))
        return false;
    if (!qa_real_resolve(attached)) {
        qa_log("cannot find the next allocator; counting nothing");
        return false; /* stays QA_STARTING: everything is served by the bootstrap arena or fails */
    }
    struct qa_usable_probe probe = {qa_real.malloc_fn, qa_real.memalign_fn, qa_real.free_fn,
                                    qa_real.usable_size_fn};
    qa_usable_choose(&probe);
    if (attached) {
        qa_config_load_given(settings);
        qa_cfg.signal = 0;
    } else
        qa_config_load();
    qa_sampling_init(); /* before any thread registers: records seed their streams from it */
    qa_exits_resolve();
    qa_chroot_resolve();
    qa_seccomp_start();
    qa_unwinder_fds_init();
    qa_blocks_init();
    qa_threads_init(&record_parts); /* before any thread registers: the key that retires it */
    qa_fast_path = settings_allow_fast_path(); /* each thread's gate starts from it */
    qa_unseen_start(
        attached); /* before counting starts: anonymous memory and allocators at start-up */
    atomic_store_explicit(&qa_ready, QA_READY, memory_order_release);
    return true;
}

static void start_threads(bool attached)
{
    struct qa_thread *t = qa_self();
    if (t == NULL)
        return;
    bool was_busy = qa_guard(t);
    qa_config_export();
    qa_patterns_resolve();
    qa_runtime_code_find(); /* before the writer, which starts lazily */
    qa_writer_start(attached);
    qa_fork_handlers_install();
    if (!attached)
        qa_signals_install();
    qa_guard_restore(t, was_busy);
}

static void initialise(void)
{
    if (start_parts(false, NULL))
        start_threads(false);
}

/* Loaded by qaudit attach, the constructor leaves everything to qaudit_attach_start: nothing
 * reaches the preload before its entries are redirected. */
__attribute__((constructor)) static void qa_constructor(void)
{
    if (qa_attach_loaded_late())
        return;
    initialise();
    qa_exits_watch_quick_exit(); /* before main: the program's handlers run before this one */
}

/* A later attach asked for another stacks mode than the one the records were set up for. */
static void say_stacks_kept(void)
{
    char mode[48];
    if (qa_cfg.stacks == QA_STACKS_SAMPLED)
        snprintf(mode, sizeof mode, "sampled:%llu%s", (unsigned long long)qa_cfg.sample_every,
                 qa_cfg.sample_by_bytes ? "b" : "");
    else
        snprintf(mode, sizeof mode, "%s", qa_stacks_name(qa_cfg.stacks));
    qa_attach_note("--stacks not changed: the stacks stay %s, as the first attach set them up (a "
                   "later attach changes --out only)",
                   mode);
}

int qa_start_attached(const char *settings)
{
    if (!qa_attach_loaded_late())
        return -EEXIST; /* started under the preload: already counting */
    if (qa_attach_active())
        return -EALREADY;
    qa_attach_name_self(settings);
    qa_attach_notes_clear();
    if (qa_is_ready()) { /* an attach after a detach: its --out, the first one's stacks */
        if (qa_config_reload_given(settings))
            say_stacks_kept();
        struct qa_thread *t = qa_self();
        bool was_busy = t ? qa_guard(t) : true;
        qa_writer_start(true);
        if (t)
            qa_guard_restore(t, was_busy);
    } else if (start_parts(true, settings))
        start_threads(true);
    else
        return -EAGAIN;
    return qa_attach_begin();
}

bool qa_ready_now(void)
{
    if (__builtin_expect(qa_is_ready(), 1))
        return true;
    initialise();
    return qa_is_ready();
}
