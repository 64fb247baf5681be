/* The dump's JSON (qaudit-alloc/1, docs/dump-format.md), section by section, rendered into
 * private memory without malloc (base/json.c): the process, the settings, the module map, the
 * timeline, the totals, the sites, the queues and checks, injected failures and the precision
 * notes. Context: the caller holds the dump lock; a final dump renders from a signal handler, so
 * everything here is async-signal-safe (integers by hand, /proc read with read). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "qaudit/control.h"
#include "output.h"

static char deepbind[8][128];
static atomic_uint_fast32_t deepbind_count QA_FORK_STATE;

void qa_dump_note_deepbind(const char *path)
{
    uint32_t i = (uint32_t)atomic_fetch_add(&deepbind_count, 1);
    if (i < 8)
        snprintf(deepbind[i], sizeof deepbind[i], "%s", path);
    qa_log("%s was loaded with RTLD_DEEPBIND: its own allocations may bypass qaudit", path);
}

static const char *const reasons[] = {"exit", "signal",       "interval", "request", "_exit",
                                      "exec", "fatal_signal", "snapshot", "detach"};

/* Buffers here are static (the dump lock is held): a fatal dump may run on a small alternate
 * signal stack. The sections use them one after another, so they share the storage: a forked
 * child's exit dump writes one page of it, not three (a page written there is a copy-on-write
 * fault). */
static union {
    char cmdline[4096];
    struct qa_usable_class usable[QA_USABLE_SLOTS];
} scratch;

const char *qa_dump_reason_name(enum qa_dump_reason reason)
{
    return reasons[reason];
}

bool qa_dump_is_final(enum qa_dump_reason reason)
{
    return reason == QA_DUMP_EXIT || reason == QA_DUMP_EXIT_NOW || reason == QA_DUMP_FATAL;
}

/* argv from /proc/self/cmdline (its first 4 KB). */
static void write_argv(struct qa_json *j)
{
    char *cmdline = scratch.cmdline;
    ssize_t len = qa_file_slurp("/proc/self/cmdline", cmdline, sizeof scratch.cmdline);
    qa_json_key(j, QA_KEY(argv));
    qa_json_begin_array(j);
    for (ssize_t i = 0; i < len;) {
        size_t arg = strnlen(cmdline + i, (size_t)(len - i));
        qa_json_strn(j, cmdline + i, arg);
        i += (ssize_t)arg + 1;
    }
    qa_json_end_array(j);
}

static void write_process(struct qa_json *j, enum qa_dump_reason reason, int signo,
                          const struct qa_module_list *modules, uint64_t now, uint64_t sequence)
{
    qa_json_key(j, QA_KEY(reason)), qa_json_str(j, reasons[reason]);
    qa_json_key(j, QA_KEY(process));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(pid)), qa_json_i64(j, getpid());
    qa_json_key(j, QA_KEY(ppid)), qa_json_i64(j, getppid());
    qa_json_key(j, QA_KEY(exe)), qa_json_str(j, qa_exe_path());
    write_argv(j);
    /* dl_iterate_phdr reports the main program first. */
    qa_json_key(j, QA_KEY(build_id));
    qa_json_str(j, modules && modules->count ? modules->items[0].build_id : "");
    qa_json_key(j, QA_KEY(start_time_ns)), qa_json_u64(j, qa_image_start_ns());
    if (qa_is_attached_image()) /* counting started then; earlier allocations are unknown */
        qa_json_key(j, QA_KEY(attached_at)), qa_json_u64(j, qa_inherited.attached_at_ns);
    if (qa_cfg.run_id[0] != '\0')
        qa_json_key(j, QA_KEY(run_id)), qa_json_str(j, qa_cfg.run_id);
    if (qa_cfg.pythonmalloc[0] != '\0') /* a Python's objects reach malloc or not */
        qa_json_key(j, QA_KEY(pythonmalloc)), qa_json_str(j, qa_cfg.pythonmalloc);
    if (qa_is_forked_child()) { /* the image it was forked from: its dumps hold the stacks of
                                   inherited_sites */
        qa_json_key(j, QA_KEY(forked_from));
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(pid)), qa_json_i64(j, qa_inherited.parent_pid);
        qa_json_key(j, QA_KEY(start_time_ns)), qa_json_u64(j, qa_inherited.parent_start_ns);
        qa_json_end_object(j);
    }
    qa_json_key(j, QA_KEY(dump_time_ns)), qa_json_u64(j, now);
    qa_json_key(j, QA_KEY(sequence)), qa_json_u64(j, sequence);
    if (qa_dump_is_final(reason) || reason == QA_DUMP_EXEC)
        qa_json_key(j, QA_KEY(end_time_ns)), qa_json_u64(j, now);
    if (reason == QA_DUMP_DETACH) /* counting ended then; the process goes on */
        qa_json_key(j, QA_KEY(detached_at)), qa_json_u64(j, now);
    if (reason == QA_DUMP_FATAL)
        qa_json_key(j, QA_KEY(end_signal)), qa_json_str(j, qa_signal_name(signo));
    if (qa_last_signal() != NULL) /* a handler of the program's took it (it may have exited) */
        qa_json_key(j, QA_KEY(last_signal)), qa_json_str(j, qa_last_signal());
    qa_json_end_object(j);
}

static void write_modules(struct qa_json *j, const struct qa_module_list *modules)
{
    qa_json_key(j, QA_KEY(modules));
    qa_json_begin_array(j);
    for (size_t i = 0; modules != NULL && i < modules->count; i++) { /* NULL: none read */
        const struct qa_module *m = &modules->items[i];
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(path)), qa_json_str(j, m->path);
        qa_json_key(j, QA_KEY(base)), qa_json_hex(j, m->base);
        qa_json_key(j, QA_KEY(start)), qa_json_hex(j, m->lo);
        qa_json_key(j, QA_KEY(end)), qa_json_hex(j, m->hi);
        qa_json_key(j, QA_KEY(build_id)), qa_json_str(j, m->build_id);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
}

static const char *const call_names[QA_CALL_COUNT] = {
    QA_KEY(malloc),         QA_KEY(calloc),        QA_KEY(realloc),  QA_KEY(reallocarray),
    QA_KEY(posix_memalign), QA_KEY(aligned_alloc), QA_KEY(memalign), QA_KEY(valloc),
    QA_KEY(pvalloc),        QA_KEY(free)};

/* Frees of blocks no call counted (allocated under the re-entrancy guard, or before the preload
 * was ready) would take live figures below zero: they are clamped there, and counted here for
 * precision.frees_uncounted. Written by write_totals, read by write_precision. */
static uint64_t frees_uncounted QA_FORK_STATE;

static uint64_t clamp_at_zero(int64_t v, int64_t *excess)
{
    if (v >= 0)
        return (uint64_t)v;
    *excess += -v;
    return 0;
}

/* A forked child's inheritance: live at the fork, and what of it the child freed. */
/* After an attach (and in a child forked after one): frees of blocks allocated before the
 * attach, by no counted call, beyond what a forked child knows it inherited. Their number is
 * unknown until they are freed, so they are said apart and never make a live figure negative. */
static void write_preexisting(struct qa_json *j, const struct qa_counters *c, int64_t over)
{
    int64_t bytes = (int64_t)c->inherited_freed_bytes - qa_inherited.bytes;
    qa_json_key(j, QA_KEY(preexisting));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(freed_blocks)), qa_json_i64(j, over > 0 ? over : 0);
    qa_json_key(j, QA_KEY(freed_bytes)), qa_json_i64(j, bytes > 0 ? bytes : 0);
    qa_json_key(j, QA_KEY(allocated_before_attach)), qa_json_str(j, "unknown");
    /* GOT entries holding another tool's function: calls through them were not counted */
    qa_json_key(j, QA_KEY(entries_left_alone)), qa_json_u64(j, qa_inherited.entries_left_alone);
    qa_json_end_object(j);
}

static void write_inherited(struct qa_json *j, const struct qa_counters *c, int64_t *excess)
{
    int64_t gone = (int64_t)(c->inherited_freed + c->inherited_reallocated);
    int64_t over = gone - qa_inherited.blocks; /* frees of blocks no call counted */
    if (qa_is_attached_image())
        write_preexisting(j, c, over);
    if (!qa_is_forked_child())
        return;
    qa_json_key(j, QA_KEY(inherited));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(blocks)), qa_json_i64(j, qa_inherited.blocks);
    qa_json_key(j, QA_KEY(bytes)), qa_json_i64(j, qa_inherited.bytes);
    qa_json_key(j, QA_KEY(freed));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(blocks)), qa_json_i64(j, over > 0 ? qa_inherited.blocks : gone);
    int64_t bytes = (int64_t)c->inherited_freed_bytes;
    qa_json_key(j, QA_KEY(bytes)),
        qa_json_i64(j, bytes > qa_inherited.bytes ? qa_inherited.bytes : bytes);
    qa_json_end_object(j);
    qa_json_key(j, QA_KEY(reallocated)), qa_json_u64(j, c->inherited_reallocated);
    qa_json_end_object(j);
    if (over > 0 && !qa_is_attached_image())
        *excess += over;
}

static void write_totals(struct qa_json *j)
{
    struct qa_counters c;
    uint64_t threads;
    qa_sum_counters(&c, &threads);
    int64_t live_bytes = qa_live_bytes_total(&c), excess = 0, ignored = 0;
    qa_peak_observe(live_bytes); /* the exact sum now is a peak's lower bound */
    qa_json_key(j, QA_KEY(totals));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(allocs)), qa_json_u64(j, qa_counters_allocs(&c));
    /* Own frees: a forked child's frees of inherited blocks are under inherited.freed. */
    qa_json_key(j, QA_KEY(frees)), qa_json_u64(j, qa_counters_own_frees(&c));
    qa_json_key(j, QA_KEY(reallocs)), qa_json_u64(j, c.reallocs);
    qa_json_key(j, QA_KEY(reallocs_in_place)), qa_json_u64(j, c.realloc_in_place);
    qa_json_key(j, QA_KEY(reallocs_moved)), qa_json_u64(j, c.realloc_moved);
    qa_json_key(j, QA_KEY(aligned_allocs)), qa_json_u64(j, qa_counters_aligned(&c));
    qa_json_key(j, QA_KEY(failed_allocs)), qa_json_u64(j, c.failed);
    qa_json_key(j, QA_KEY(temporary)), qa_json_u64(j, c.temporary);
    qa_json_key(j, QA_KEY(bytes_requested)), qa_json_u64(j, c.bytes_requested);
    qa_json_key(j, QA_KEY(bytes_usable)), qa_json_u64(j, c.bytes_usable);
    qa_json_key(j, QA_KEY(live_bytes)), qa_json_u64(j, clamp_at_zero(live_bytes, &ignored));
    qa_json_key(j, QA_KEY(live_blocks)),
        qa_json_u64(j, clamp_at_zero(qa_live_blocks_total(&c), &excess));
    qa_json_key(j, QA_KEY(peak_live_bytes)),
        qa_json_u64(j, clamp_at_zero(qa_peak_live(), &ignored));
    qa_json_key(j, QA_KEY(threads)), qa_json_u64(j, threads);
    write_inherited(j, &c, &excess);
    frees_uncounted = (uint64_t)excess;
    qa_json_key(j, QA_KEY(calls));
    qa_json_begin_object(j);
    for (int i = 0; i < QA_CALL_COUNT; i++)
        qa_json_key(j, call_names[i]), qa_json_u64(j, c.by_call[i]);
    qa_json_end_object(j);
    qa_json_end_object(j);

    qa_json_key(j, QA_KEY(requested_sizes));
    qa_json_begin_array(j);
    for (unsigned b = 0; b < QA_SIZE_BUCKETS; b++) {
        if (c.size_hist[b] == 0)
            continue;
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(from)), qa_json_u64(j, b == 0 ? 0 : qa_size_bucket_floor(b));
        qa_json_key(j, QA_KEY(to)), qa_json_u64(j, qa_size_bucket_floor(b + 1) - 1);
        qa_json_key(j, QA_KEY(count)), qa_json_u64(j, c.size_hist[b]);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);

    size_t n = qa_usable_hist(scratch.usable, QA_USABLE_SLOTS);
    qa_json_key(j, QA_KEY(usable_sizes));
    qa_json_begin_array(j);
    for (size_t i = 0; i < n; i++) {
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(usable)), qa_json_u64(j, scratch.usable[i].usable);
        qa_json_key(j, QA_KEY(count)), qa_json_u64(j, scratch.usable[i].count);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
}

/* Sampled by bytes: what the site's samples stand for, summed over each sample's own weight
 * (sampling.c), so the report need not assume every allocation of a site has its mean size. */
static void write_site_weights(struct qa_json *j, const struct qa_site_view *s)
{
    if (qa_cfg.stacks != QA_STACKS_SAMPLED || !qa_cfg.sample_by_bytes)
        return;
    qa_json_key(j, QA_KEY(allocs_estimate));
    qa_json_u64(j, (s->weight_allocs + QA_WEIGHT_ONE / 2) / QA_WEIGHT_ONE);
    qa_json_key(j, QA_KEY(bytes_estimate)), qa_json_u64(j, s->weight_bytes);
}

/* A forked child's part of a site it counted at: what the site held at the fork, and what of it
 * the child freed. */
static void write_site_inherited(struct qa_json *j, const struct qa_site_view *s)
{
    if (s->inherited_blocks == 0 && s->inherited_freed == 0)
        return;
    qa_json_key(j, QA_KEY(inherited));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(blocks)), qa_json_i64(j, s->inherited_blocks);
    qa_json_key(j, QA_KEY(bytes)), qa_json_i64(j, s->inherited_bytes);
    qa_json_key(j, QA_KEY(freed_blocks)), qa_json_u64(j, s->inherited_freed);
    qa_json_key(j, QA_KEY(freed_bytes)), qa_json_u64(j, s->inherited_freed_bytes);
    qa_json_end_object(j);
}

/* Sites the image counted at, with their stacks. */
static void write_sites(struct qa_json *j)
{
    qa_json_key(j, QA_KEY(sites));
    qa_json_begin_array(j);
    uint32_t n = qa_site_count();
    for (uint32_t id = 1; id < n; id++) {
        struct qa_site_view s;
        if (!qa_site_get(id, &s) || !s.touched)
            continue;
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(id)), qa_json_u64(j, s.id);
        qa_json_frames(j, s.frames, s.depth);
        qa_json_key(j, QA_KEY(allocs)), qa_json_u64(j, s.allocs);
        qa_json_key(j, QA_KEY(frees)), qa_json_u64(j, s.frees);
        qa_json_key(j, QA_KEY(bytes)), qa_json_u64(j, s.bytes);
        qa_json_key(j, QA_KEY(live_bytes)), qa_json_i64(j, (int64_t)s.live_bytes);
        qa_json_key(j, QA_KEY(peak_live_bytes)), qa_json_u64(j, s.peak_live_bytes);
        qa_json_key(j, QA_KEY(never_written_bytes)), qa_json_u64(j, s.never_written);
        qa_json_key(j, QA_KEY(queue_allocs)), qa_json_u64(j, s.queue_allocs);
        qa_json_key(j, QA_KEY(temporary)), qa_json_u64(j, s.temporary);
        write_site_weights(j, &s);
        write_site_inherited(j, &s);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
}

/* A forked child's inheritance at sites where it allocated nothing: [id, blocks, bytes] each,
 * [id, blocks, bytes, freed_blocks, freed_bytes] where it freed some of those blocks, without
 * stacks (the same id in its parent's dumps has them), so that a child's dump grows with what
 * the child did, not with what it inherited. */
static void write_inherited_sites(struct qa_json *j)
{
    if (!qa_is_forked_child())
        return;
    qa_json_key(j, QA_KEY(inherited_sites));
    qa_json_begin_array(j);
    uint32_t n = qa_site_count();
    for (uint32_t id = 1; id < n; id++) {
        struct qa_site_view s;
        if (!qa_site_get(id, &s) || s.touched || s.inherited_blocks <= 0)
            continue;
        qa_json_begin_array(j);
        qa_json_u64(j, id);
        qa_json_i64(j, s.inherited_blocks);
        qa_json_i64(j, s.inherited_bytes);
        if (s.inherited_freed > 0) {
            qa_json_u64(j, s.inherited_freed);
            qa_json_u64(j, s.inherited_freed_bytes);
        }
        qa_json_end_array(j);
    }
    qa_json_end_array(j);
}

/* QAUDIT_UNWIND_CHECK=1 only: what walking each stack both ways found (records/stacks.c). */
static void write_unwind_check(struct qa_json *j)
{
    if (!qa_cfg.unwind_check)
        return;
    qa_json_key(j, QA_KEY(unwind_check));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(stacks_compared)), qa_json_u64(j, atomic_load(&qa_unwind_compared));
    qa_json_key(j, QA_KEY(stacks_differed)), qa_json_u64(j, atomic_load(&qa_unwind_differed));
    qa_json_key(j, QA_KEY(stacks_by_library)), qa_json_u64(j, atomic_load(&qa_unwind_by_library));
    qa_json_end_object(j);
}

static void write_precision(struct qa_json *j, const struct qa_module_list *modules)
{
    uint64_t modules_dropped = modules ? modules->dropped : 0;
    uint64_t blocks = atomic_load(&qa_blocks_dropped), sites = atomic_load(&qa_sites_dropped);
    uint64_t truncated = atomic_load(&qa_stacks_truncated), usable = qa_usable_overflow();
    uint32_t deep = (uint32_t)atomic_load(&deepbind_count);
    qa_json_key(j, QA_KEY(precision));
    qa_json_begin_object(j);
    bool seen_all = qa_unseen_write(j); /* unseen.c: other allocators, anonymous memory */
    qa_json_key(j, QA_KEY(exact));
    uint64_t unowned = atomic_load(&qa_owned_untracked);
    qa_json_bool(j, blocks == 0 && sites == 0 && usable == 0 && deep == 0 && modules_dropped == 0 &&
                        modules != NULL && seen_all && frees_uncounted == 0 && unowned == 0);
    qa_json_key(j, QA_KEY(counts_exact)), qa_json_bool(j, true);
    qa_json_key(j, QA_KEY(frees_uncounted)), qa_json_u64(j, frees_uncounted);
    qa_json_key(j, QA_KEY(blocks_outside_owned_map)), qa_json_u64(j, unowned);
    qa_json_key(j, QA_KEY(peak_live_bytes_within));
    qa_json_u64(j, qa_thread_total() <= 1 ? 0 : (qa_thread_total() - 1) * 64 * 1024);
    qa_json_key(j, QA_KEY(blocks_untracked)), qa_json_u64(j, blocks);
    qa_json_key(j, QA_KEY(sites_dropped)), qa_json_u64(j, sites);
    qa_json_key(j, QA_KEY(stacks_truncated)), qa_json_u64(j, truncated);
    qa_json_key(j, QA_KEY(usable_sizes_dropped)), qa_json_u64(j, usable);
    qa_json_key(j, QA_KEY(usable_sizes_from)), qa_json_str(j, qa_usable_source());
    qa_json_key(j, QA_KEY(modules_dropped)), qa_json_u64(j, modules_dropped);
    qa_json_key(j, QA_KEY(modules_known)), qa_json_bool(j, modules != NULL);
    qa_json_key(j, QA_KEY(never_written_unattributed)),
        qa_json_u64(j, qa_never_written_unattributed());
    qa_json_key(j, QA_KEY(site_pattern_ranges)), qa_json_u64(j, qa_pattern_ranges());
    write_unwind_check(j);
    qa_json_key(j, QA_KEY(deepbind_libraries));
    qa_json_begin_array(j);
    for (uint32_t i = 0; i < deep && i < 8; i++)
        qa_json_str(j, deepbind[i]);
    qa_json_end_array(j);
    qa_json_end_object(j);
}

const char *qa_stacks_name(enum qa_stacks mode)
{
    static const char *const stacks[] = {"off", "sampled", "always", "fp", "queue"};
    return stacks[mode];
}

static void write_config(struct qa_json *j)
{
    qa_json_key(j, QA_KEY(config));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(stacks)), qa_json_str(j, qa_stacks_name(qa_cfg.stacks));
    qa_json_key(j, QA_KEY(sample_every)), qa_json_u64(j, qa_cfg.sample_every);
    qa_json_key(j, QA_KEY(sample_by_bytes)), qa_json_bool(j, qa_cfg.sample_by_bytes);
    if (qa_cfg.stacks == QA_STACKS_SAMPLED) {
        qa_json_key(j, QA_KEY(sample_intervals)); /* sampling.c */
        qa_json_str(j, qa_cfg.sample_by_bytes ? "exponential" : "geometric");
    }
    qa_json_key(j, QA_KEY(sample_seed)), qa_json_u64(j, qa_sampling_seed());
    qa_json_key(j, QA_KEY(seed_explicit)), qa_json_bool(j, qa_cfg.seed_set);
    qa_json_key(j, QA_KEY(stack_depth)), qa_json_u64(j, qa_cfg.depth);
    qa_json_key(j, QA_KEY(queue_sites)), qa_json_str(j, qa_cfg.sites);
    static const char *const poison[] = {"off", "all", "queue"};
    qa_json_key(j, QA_KEY(poison)), qa_json_str(j, poison[qa_cfg.poison]);
    static const char *const assert_modes[] = {"off", "report", "abort"};
    qa_json_key(j, QA_KEY(assert_depth1)), qa_json_str(j, assert_modes[qa_cfg.assert_depth1]);
    qa_json_key(j, QA_KEY(follow_exec)), qa_json_bool(j, qa_cfg.follow_exec);
    qa_json_key(j, QA_KEY(fallback_dir)), qa_json_str(j, qa_cfg.fallback_dir);
    qa_json_key(j, QA_KEY(interval)), qa_json_u64(j, qa_cfg.interval);
    qa_json_key(j, QA_KEY(timeline_ms)), qa_json_u64(j, qa_cfg.timeline_ms);
    qa_json_end_object(j);
}

struct qa_writer_state qa_writer_state QA_FORK_STATE;

/* running: the writer takes the timeline's points at the period; waiting: it has not started
 * (lazily: at an allocation delay_ms after the start or fork), the allocating threads take them;
 * ended: it ended at the main thread's pthread_exit; failed: it could not start. In the last
 * three the points come only as threads allocate. forks: the image has forked a child, so it
 * waits for a request, a dump signal or threads of the program's, not for the time. */
static void write_writer_state(struct qa_json *j)
{
    const struct qa_writer_state *w = &qa_writer_state;
    bool waiting = atomic_load(&qa_writer_waiting), ended = atomic_load(&w->ended_for_good);
    const char *state = !waiting ? "running" : w->failed ? "failed" : ended ? "ended" : "waiting";
    qa_json_key(j, QA_KEY(timeline_writer));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(state)), qa_json_str(j, state);
    qa_json_key(j, QA_KEY(delay_ms)), qa_json_u64(j, QAUDIT_WRITER_LAZY_MS);
    if (w->started_at_ns != 0)
        qa_json_key(j, QA_KEY(started_ns)), qa_json_u64(j, w->started_at_ns);
    if (ended && w->stopped_at_ns != 0)
        qa_json_key(j, QA_KEY(stopped_ns)), qa_json_u64(j, w->stopped_at_ns);
    qa_json_key(j, QA_KEY(forks)), qa_json_bool(j, atomic_load(&w->has_forked));
    qa_json_end_object(j);
}

void qa_dump_render(struct qa_json *j, enum qa_dump_reason reason, int signo,
                    const struct qa_module_list *modules, uint64_t sequence)
{
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(format)), qa_json_str(j, "qaudit-alloc/1");
    uint64_t now = qa_now_ns(); /* the dump's moment, its timeline's last point too */
    qa_memory_dump_begin();
    write_process(j, reason, signo, modules, now, sequence);
    write_config(j);
    write_modules(j, modules);
    qa_timeline_write(j, now); /* first: its points raise the peak that totals gives */
    if (qa_timeline_on())
        write_writer_state(j);
    write_totals(j);
    write_sites(j);
    write_inherited_sites(j);
    qa_queue_write(j);
    qa_queue_write_checks(j, qa_dump_is_final(reason) || reason == QA_DUMP_EXEC);
    qa_fault_write(j);
    write_precision(j, modules);
    qa_memory_dump_end();
    qa_json_end_object(j);
    qa_json_raw(j, "\n", 1);
}
