/* The dump's JSON keys (qaudit-alloc/1, docs/dump-format.md): one table that the writer
 * (interpose/, through base/json.c) and the readers (reports/'s dump reader and dump head) both
 * name keys from, so that a key spelled differently on one side does not compile. Header-only:
 * the interposer links nothing new, and a key costs no code (a member of one constant struct,
 * usable in static initialisers too). The dump format is a stable contract: a key is added here,
 * never renamed.
 *
 * Keys whose names are data are the only ones not listed: an allocator family's entry points
 * under precision.allocators.<family>.calls and .attach_unreached (interpose/src/extra_abi.h's
 * QAUDIT_*_ENTRIES tables). interpose/tests/test_dump_keys.c walks dumps and fails on any other
 * key missing from this table. */
#ifndef COMMON_DUMP_KEYS_H
#define COMMON_DUMP_KEYS_H

/* X(identifier, "key"), sorted by key. */
#define QA_DUMP_KEYS(X)                                                                            \
    X(aligned_alloc, "aligned_alloc")                                                              \
    X(aligned_allocs, "aligned_allocs")                                                            \
    X(allocated_before_attach, "allocated_before_attach")                                          \
    X(allocator, "allocator")                                                                      \
    X(allocators, "allocators")                                                                    \
    X(allocs, "allocs")                                                                            \
    X(allocs_by_depth, "allocs_by_depth")                                                          \
    X(allocs_estimate, "allocs_estimate")                                                          \
    X(allocs_per_connection, "allocs_per_connection")                                              \
    X(anonymous_allowance, "anonymous_allowance")                                                  \
    X(anonymous_bytes, "anonymous_bytes")                                                          \
    X(anonymous_bytes_at_start, "anonymous_bytes_at_start")                                        \
    X(anonymous_memory_from, "anonymous_memory_from")                                              \
    X(argv, "argv")                                                                                \
    X(assert_depth1, "assert_depth1")                                                              \
    X(attach_unreached, "attach_unreached")                                                        \
    X(attach_unreached_bound_by, "attach_unreached_bound_by")                                      \
    X(attached_at, "attached_at")                                                                  \
    X(attribution, "attribution")                                                                  \
    X(base, "base")                                                                                \
    X(blocks, "blocks")                                                                            \
    X(blocks_outside_owned_map, "blocks_outside_owned_map")                                        \
    X(blocks_untracked, "blocks_untracked")                                                        \
    X(build_id, "build_id")                                                                        \
    X(by_both, "by_both")                                                                          \
    X(by_hooks, "by_hooks")                                                                        \
    X(by_peak_depth, "by_peak_depth")                                                              \
    X(by_stack_patterns, "by_stack_patterns")                                                      \
    X(bytes, "bytes")                                                                              \
    X(bytes_estimate, "bytes_estimate")                                                            \
    X(bytes_per_connection, "bytes_per_connection")                                                \
    X(bytes_requested, "bytes_requested")                                                          \
    X(bytes_usable, "bytes_usable")                                                                \
    X(calloc, "calloc")                                                                            \
    X(calls, "calls")                                                                              \
    X(candidate, "candidate")                                                                      \
    X(candidates, "candidates")                                                                    \
    X(checks, "checks")                                                                            \
    X(closed, "closed")                                                                            \
    X(config, "config")                                                                            \
    X(connections, "connections")                                                                  \
    X(count, "count")                                                                              \
    X(counted_live_bytes, "counted_live_bytes")                                                    \
    X(counted_peak_live_bytes, "counted_peak_live_bytes")                                          \
    X(counts_exact, "counts_exact")                                                                \
    X(deepbind_libraries, "deepbind_libraries")                                                    \
    X(delay_ms, "delay_ms")                                                                        \
    X(depth, "depth")                                                                              \
    X(depth_histogram, "depth_histogram")                                                          \
    X(depth_one_violations, "depth_one_violations")                                                \
    X(detached_at, "detached_at")                                                                  \
    X(detail, "detail")                                                                            \
    X(discarded, "discarded")                                                                      \
    X(dump_time_ns, "dump_time_ns")                                                                \
    X(end, "end")                                                                                  \
    X(end_signal, "end_signal")                                                                    \
    X(end_time_ns, "end_time_ns")                                                                  \
    X(entries_left_alone, "entries_left_alone")                                                    \
    X(events_without_connection, "events_without_connection")                                      \
    X(exact, "exact")                                                                              \
    X(exe, "exe")                                                                                  \
    X(failed_allocs, "failed_allocs")                                                              \
    X(fallback_dir, "fallback_dir")                                                                \
    X(first, "first")                                                                              \
    X(follow_exec, "follow_exec")                                                                  \
    X(forked_from, "forked_from")                                                                  \
    X(forks, "forks")                                                                              \
    X(format, "format")                                                                            \
    X(frames, "frames")                                                                            \
    X(free, "free")                                                                                \
    X(freed, "freed")                                                                              \
    X(freed_blocks, "freed_blocks")                                                                \
    X(freed_bytes, "freed_bytes")                                                                  \
    X(frees, "frees")                                                                              \
    X(frees_uncounted, "frees_uncounted")                                                          \
    X(from, "from")                                                                                \
    X(grows, "grows")                                                                              \
    X(id, "id")                                                                                    \
    X(inherited, "inherited")                                                                      \
    X(inherited_sites, "inherited_sites")                                                          \
    X(injected, "injected")                                                                        \
    X(injected_failures, "injected_failures")                                                      \
    X(interposed, "interposed")                                                                    \
    X(interval, "interval")                                                                        \
    X(jemalloc, "jemalloc")                                                                        \
    X(last_signal, "last_signal")                                                                  \
    X(library, "library")                                                                          \
    X(live_blocks, "live_blocks")                                                                  \
    X(live_bytes, "live_bytes")                                                                    \
    X(malloc, "malloc")                                                                            \
    X(memalign, "memalign")                                                                        \
    X(mimalloc, "mimalloc")                                                                        \
    X(modules, "modules")                                                                          \
    X(modules_dropped, "modules_dropped")                                                          \
    X(modules_known, "modules_known")                                                              \
    X(moved, "moved")                                                                              \
    X(name, "name")                                                                                \
    X(never_written_bytes, "never_written_bytes")                                                  \
    X(never_written_unattributed, "never_written_unattributed")                                    \
    X(open_now, "open_now")                                                                        \
    X(opened, "opened")                                                                            \
    X(or_more, "or_more")                                                                          \
    X(parent_peak_live_bytes, "parent_peak_live_bytes")                                            \
    X(passed, "passed")                                                                            \
    X(path, "path")                                                                                \
    X(peak_depth, "peak_depth")                                                                    \
    X(peak_live_bytes, "peak_live_bytes")                                                          \
    X(peak_live_bytes_within, "peak_live_bytes_within")                                            \
    X(pid, "pid")                                                                                  \
    X(poison, "poison")                                                                            \
    X(pops, "pops")                                                                                \
    X(posix_memalign, "posix_memalign")                                                            \
    X(ppid, "ppid")                                                                                \
    X(precision, "precision")                                                                      \
    X(preexisting, "preexisting")                                                                  \
    X(process, "process")                                                                          \
    X(pushes, "pushes")                                                                            \
    X(pvalloc, "pvalloc")                                                                          \
    X(pythonmalloc, "pythonmalloc")                                                                \
    X(queue_allocs, "queue_allocs")                                                                \
    X(queue_sites, "queue_sites")                                                                  \
    X(queued_now, "queued_now")                                                                    \
    X(queues, "queues")                                                                            \
    X(realloc, "realloc")                                                                          \
    X(reallocarray, "reallocarray")                                                                \
    X(reallocated, "reallocated")                                                                  \
    X(reallocs, "reallocs")                                                                        \
    X(reallocs_in_place, "reallocs_in_place")                                                      \
    X(reallocs_moved, "reallocs_moved")                                                            \
    X(reason, "reason")                                                                            \
    X(records_dropped, "records_dropped")                                                          \
    X(refused_events, "refused_events")                                                            \
    X(requested_sizes, "requested_sizes")                                                          \
    X(returns_to_inline, "returns_to_inline")                                                      \
    X(rss_bytes, "rss_bytes")                                                                      \
    X(run_id, "run_id")                                                                            \
    X(sample_by, "sample_by") /* read only: dumps before sample_by_bytes */                        \
    X(sample_by_bytes, "sample_by_bytes")                                                          \
    X(sample_every, "sample_every")                                                                \
    X(sample_intervals, "sample_intervals")                                                        \
    X(sample_seed, "sample_seed")                                                                  \
    X(seed_explicit, "seed_explicit")                                                              \
    X(sequence, "sequence")                                                                        \
    X(shim_loaded, "shim_loaded")                                                                  \
    X(shrinks, "shrinks")                                                                          \
    X(site_pattern_ranges, "site_pattern_ranges")                                                  \
    X(sites, "sites")                                                                              \
    X(sites_dropped, "sites_dropped")                                                              \
    X(size, "size")                                                                                \
    X(stack_depth, "stack_depth")                                                                  \
    X(stacks, "stacks")                                                                            \
    X(stacks_by_library, "stacks_by_library")                                                      \
    X(stacks_compared, "stacks_compared")                                                          \
    X(stacks_differed, "stacks_differed")                                                          \
    X(stacks_truncated, "stacks_truncated")                                                        \
    X(start, "start")                                                                              \
    X(start_time_ns, "start_time_ns")                                                              \
    X(started_ns, "started_ns")                                                                    \
    X(state, "state")                                                                              \
    X(status, "status")                                                                            \
    X(stopped_ns, "stopped_ns")                                                                    \
    X(tcmalloc, "tcmalloc")                                                                        \
    X(temporary, "temporary")                                                                      \
    X(threads, "threads")                                                                          \
    X(time_ns, "time_ns")                                                                          \
    X(timeline, "timeline")                                                                        \
    X(timeline_ms, "timeline_ms")                                                                  \
    X(timeline_period_ns, "timeline_period_ns")                                                    \
    X(timeline_writer, "timeline_writer")                                                          \
    X(to, "to")                                                                                    \
    X(totals, "totals")                                                                            \
    X(unexplained_anonymous, "unexplained_anonymous")                                              \
    X(uninterposed_allocators, "uninterposed_allocators")                                          \
    X(unreachable_allocators, "unreachable_allocators")                                            \
    X(unwind_check, "unwind_check")                                                                \
    X(usable, "usable")                                                                            \
    X(usable_sizes, "usable_sizes")                                                                \
    X(usable_sizes_dropped, "usable_sizes_dropped")                                                \
    X(usable_sizes_from, "usable_sizes_from")                                                      \
    X(valloc, "valloc")

#define QA_DUMP_KEY_MEMBER_(id, key) char id[sizeof key];
#define QA_DUMP_KEY_INIT_(id, key) .id = key,
struct qa_dump_keys {
    QA_DUMP_KEYS(QA_DUMP_KEY_MEMBER_)
};
/* One copy in a program or library however many files include this: weak (the linker keeps one),
 * hidden (never exported: the interposer's exported names stay what they are). */
__attribute__((weak, visibility("hidden")))
const struct qa_dump_keys qa_dump_keys = {QA_DUMP_KEYS(QA_DUMP_KEY_INIT_)};
#undef QA_DUMP_KEY_MEMBER_
#undef QA_DUMP_KEY_INIT_

/* The key named id ("pid" for QA_KEY(pid)): a constant string, a compile error when id is not in
 * the table. */
#define QA_KEY(id) (qa_dump_keys.id)

#endif
