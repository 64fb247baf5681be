/* The hook consumer: qaudit_hook receives the server's connection and queue events, maps each
 * queue to its connection, follows depths, and attributes every allocation made between
 * QUEUE_ENTER and QUEUE_LEAVE to that queue, its connection and its depth. It also checks that
 * values are conserved and that nothing is allocated at depth one.
 * Context: qaudit_hook's calls on the program's threads and the slow path of an allocation
 * inside a queue operation, both under the guard; dumps read the records and run the checks. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qaudit/hooks.h"
#include "records.h"

#define MAX_RECORDS (1u << 20)
#define INDEX_SHARDS 64
#define INDEX_SLOTS (1u << 21) /* shared by all shards, each owns a slice */
#define DEPTH_BUCKETS 66       /* depths 0..64 exactly, then "65 or more" */
#define MAX_VIOLATIONS 8

/* One queue's life, from its first event (normally CONN_OPEN) on. Written only by the thread
 * that owns the queue; the dump reads it without a lock and may see a moment-old value. */
struct record {
    const void *queue, *conn;
    uint64_t pushes, pops, discarded, moved_in, moved_out;
    uint64_t allocs, bytes, grows, shrinks, inlines;
    uint32_t depth, peak_depth;
    bool open, closed;
    /* Values the queue held when its first counting event came: 0 for every queue of a process
     * started under the preload; a queue first seen after an attach may already hold some. */
    uint64_t held_at_first;
    bool seen;
};

struct violation {
    uint64_t depth, size;
    int frames_depth;
    void *frames[QA_MAX_DEPTH];
};

static struct record *records;
static atomic_uint_fast32_t record_count QA_FORK_STATE;
static atomic_uint_fast64_t records_dropped QA_FORK_STATE, refused_events QA_FORK_STATE,
    without_connection QA_FORK_STATE, opens QA_FORK_STATE, closes QA_FORK_STATE;
/* Outside qa_fork_state, which must fit one page: read (and reset in a child) only once
 * something was counted into them (depths_counted), as their pages are untouched otherwise and
 * even a read of such a page is a fault in a forked child. */
static atomic_uint_fast64_t depth_hist[DEPTH_BUCKETS], allocs_by_depth[DEPTH_BUCKETS];

static unsigned depth_bucket(uint64_t depth)
{
    return depth < DEPTH_BUCKETS - 1 ? (unsigned)depth : DEPTH_BUCKETS - 1;
}
static atomic_uint_fast64_t hook_allocs QA_FORK_STATE, stack_allocs QA_FORK_STATE,
    both_allocs QA_FORK_STATE, violations QA_FORK_STATE;
static struct violation first_violations[MAX_VIOLATIONS];
static atomic_uint_fast32_t violations_kept QA_FORK_STATE;

/* Whether depth_hist or allocs_by_depth may hold a count: a push or pop needs a record, and an
 * allocation by depth is one inside a hooked operation. */
static bool depths_counted(void)
{
    return atomic_load(&record_count) != 0 || atomic_load(&hook_allocs) != 0;
}

static atomic_int abi_warned;

/* queue pointer -> record index + 1; sharded spinlocks, linear probing inside a slice. */
static struct shard_lock {
    _Alignas(64) atomic_flag lock; /* one a cache line: none shares its neighbour's */
} shard_locks[INDEX_SHARDS];
_Static_assert(sizeof(struct shard_lock) == 64, "a shard's lock is one cache line");
static uint32_t *slots QA_FORK_STATE;
static atomic_int setup_state;

static bool setup(void)
{
    int state = atomic_load(&setup_state);
    if (state == 2)
        return true;
    if (state == 0 && atomic_compare_exchange_strong(&setup_state, &state, 1)) {
        records = qa_mmap((size_t)MAX_RECORDS * sizeof *records);
        slots = qa_mmap((size_t)INDEX_SLOTS * sizeof *slots);
        atomic_store(&setup_state, records && slots ? 2 : 3);
    }
    while ((state = atomic_load(&setup_state)) == 1)
        ;
    return state == 2;
}

static uint64_t mix(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}

#define SLICE (INDEX_SLOTS / INDEX_SHARDS)

/* The slot holding queue (or the empty slot where it would go), with its shard locked. */
static uint32_t *find_slot(const void *queue, unsigned *shard)
{
    uint64_t h = mix(queue);
    *shard = h & (INDEX_SHARDS - 1);
    while (atomic_flag_test_and_set_explicit(&shard_locks[*shard].lock, memory_order_acquire))
        ;
    uint32_t *slice = slots + (size_t)*shard * SLICE;
    for (size_t i = 0; i < SLICE; i++) {
        uint32_t *slot = &slice[((h >> 8) + i) & (SLICE - 1)];
        if (*slot == 0 || records[*slot - 1].queue == queue)
            return slot;
    }
    return NULL;
}

static void unlock_shard(unsigned shard)
{
    atomic_flag_clear_explicit(&shard_locks[shard].lock, memory_order_release);
}

static struct record *new_record(const void *queue, const void *conn)
{
    uint32_t index = (uint32_t)atomic_fetch_add(&record_count, 1);
    if (index >= MAX_RECORDS) {
        atomic_fetch_add(&records_dropped, 1);
        return NULL;
    }
    struct record *r = &records[index];
    memset(r, 0, sizeof *r);
    r->queue = queue;
    r->conn = conn;
    return r;
}

/* The queue's current record; a new one (and a new mapping) when fresh is set, or when the queue
 * was never seen. */
static struct record *lookup_shared(const void *queue, const void *conn, bool fresh);

/* lookup_shared behind the thread's one-entry cache. */
static struct record *lookup(const void *queue, const void *conn, bool fresh)
{
    struct qa_thread *t = qa_self();
    if (!fresh && t != NULL && t->cached_queue == queue && t->cached_record != NULL)
        return t->cached_record;
    struct record *r = lookup_shared(queue, conn, fresh);
    if (t != NULL && r != NULL) {
        t->cached_queue = queue;
        t->cached_record = r;
    }
    return r;
}

static struct record *lookup_shared(const void *queue, const void *conn, bool fresh)
{
    if (!setup())
        return NULL;
    unsigned shard;
    uint32_t *slot = find_slot(queue, &shard);
    struct record *r = NULL;
    if (slot != NULL) {
        if (*slot != 0 && !fresh) {
            r = &records[*slot - 1];
        } else {
            r = new_record(queue, conn);
            if (r != NULL)
                *slot = (uint32_t)(r - records) + 1;
        }
    } else {
        atomic_fetch_add(&records_dropped, 1);
    }
    unlock_shard(shard);
    if (r != NULL && r->conn == NULL && !fresh)
        atomic_fetch_add_explicit(&without_connection, 1, memory_order_relaxed);
    return r;
}

/* A record's first push, pop, clear, destroy or move says what the queue held before it. */
static void note_first_sight(struct record *r, uint64_t held_before)
{
    if (r->seen)
        return;
    r->seen = true;
    r->held_at_first = held_before;
}

static void note_depth(struct record *r, uint64_t depth)
{
    r->depth = (uint32_t)depth;
    if (r->depth > r->peak_depth)
        r->peak_depth = r->depth;
}

/* A thread record's new owner: no queue operation of the previous owner's is under way. */
void qa_queue_new_owner(struct qa_thread *t)
{
    t->queue_op = NULL;
    t->queue_op_depth = 0;
    t->cached_queue = NULL;
    t->cached_record = NULL;
}

/* One hook event (entry/hooks.c checks readiness first). */
void qa_queue_event(const struct qaudit_event *ev)
{
    if (ev->abi != QAUDIT_HOOKS_ABI) {
        atomic_fetch_add(&refused_events, 1);
        if (atomic_exchange(&abi_warned, 1) == 0)
            qa_log("hook events of ABI %u refused: this interposer speaks ABI %d",
                   (unsigned)ev->abi, QAUDIT_HOOKS_ABI);
        return;
    }
    struct qa_thread *t = qa_self();
    if (t == NULL)
        return;
    struct record *r;
    switch (ev->kind) {
    case QAUDIT_CONN_OPEN:
        atomic_fetch_add(&opens, 1);
        if ((r = lookup(ev->queue, ev->owner, true)) != NULL)
            r->open = true;
        return;
    case QAUDIT_CONN_CLOSE:
        atomic_fetch_add(&closes, 1);
        if ((r = lookup(ev->queue, ev->owner, false)) != NULL) {
            r->open = false;
            r->closed = true;
        }
        return;
    case QAUDIT_QUEUE_ENTER:
        t->queue_op = ev->queue;
        t->queue_op_depth = ev->depth;
        t->gate |= QA_GATE_QUEUE_OP;
        return;
    case QAUDIT_QUEUE_LEAVE:
        t->queue_op = NULL;
        t->gate &= ~(unsigned)QA_GATE_QUEUE_OP;
        return;
    default:
        break;
    }
    if ((r = lookup(ev->queue, NULL, false)) == NULL)
        return;
    switch (ev->kind) {
    case QAUDIT_QUEUE_PUSH:
        note_first_sight(r, ev->depth > 0 ? ev->depth - 1 : 0);
        r->pushes++;
        note_depth(r, ev->depth);
        atomic_fetch_add_explicit(&depth_hist[depth_bucket(ev->depth)], 1, memory_order_relaxed);
        break;
    case QAUDIT_QUEUE_POP:
        note_first_sight(r, ev->depth + 1);
        r->pops++;
        note_depth(r, ev->depth);
        break;
    case QAUDIT_QUEUE_GROW:
        r->grows++;
        break;
    case QAUDIT_QUEUE_SHRINK:
        r->shrinks++;
        break;
    case QAUDIT_QUEUE_INLINE:
        r->inlines++;
        break;
    case QAUDIT_QUEUE_CLEAR:
    case QAUDIT_QUEUE_DESTROY:
        note_first_sight(r, ev->discarded);
        r->discarded += ev->discarded;
        note_depth(r, 0);
        break;
    case QAUDIT_QUEUE_MOVE: {
        note_first_sight(r, ev->discarded);
        r->discarded += ev->discarded;
        r->moved_in += ev->depth;
        note_depth(r, ev->depth);
        struct record *from = lookup(ev->other, NULL, false);
        if (from != NULL) {
            note_first_sight(from, ev->depth);
            from->moved_out += ev->depth;
            note_depth(from, 0);
        }
        break;
    }
    default:
        break;
    }
}

bool qa_queue_in_op(const struct qa_thread *t)
{
    return t->queue_op != NULL;
}

/* What runs before QAUDIT_ASSERT_DEPTH1=abort aborts: the dump (output/ sets it at start-up: the
 * records know nothing of dumps). */
static void (*before_abort)(void);

void qa_queue_before_abort(void (*dump)(void))
{
    before_abort = dump;
}

static void report_violation(uint64_t depth, uint64_t size, void *const *frames, int n)
{
    uint32_t slot = (uint32_t)atomic_fetch_add(&violations_kept, 1);
    if (slot < MAX_VIOLATIONS) {
        struct violation *v = &first_violations[slot];
        v->depth = depth;
        v->size = size;
        v->frames_depth = n;
        memcpy(v->frames, frames, (size_t)n * sizeof *frames);
    }
    if (qa_cfg.assert_depth1 != QA_ASSERT_ABORT)
        return;
    qa_log("QAUDIT_ASSERT_DEPTH1=abort: %llu-byte allocation inside a queue operation at depth "
           "%llu; stack:",
           (unsigned long long)size, (unsigned long long)depth);
    for (int i = 0; i < n; i++)
        qa_log("  #%d %p", i, frames[i]);
    if (before_abort != NULL)
        before_abort();
    abort();
}

void qa_queue_on_alloc(struct qa_thread *t, uint64_t size, void *const *frames, int depth)
{
    bool by_hook = t->queue_op != NULL;
    bool by_stack = depth >= 0 && qa_patterns_active() && qa_frames_match_patterns(frames, depth);
    if (by_stack)
        atomic_fetch_add_explicit(&stack_allocs, 1, memory_order_relaxed);
    if (!by_hook)
        return;
    atomic_fetch_add_explicit(&hook_allocs, 1, memory_order_relaxed);
    if (by_stack)
        atomic_fetch_add_explicit(&both_allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&allocs_by_depth[depth_bucket(t->queue_op_depth)], 1,
                              memory_order_relaxed);
    struct record *r = lookup(t->queue_op, NULL, false);
    if (r != NULL) {
        r->allocs++;
        r->bytes += size;
    }
    if (t->queue_op_depth > 1 || qa_cfg.assert_depth1 == QA_ASSERT_OFF)
        return;
    atomic_fetch_add(&violations, 1);
    void *local[QA_MAX_DEPTH];
    if (depth < 0) {
        depth = qa_capture(local, qa_cfg.depth, false);
        frames = local;
    }
    report_violation(t->queue_op_depth, size, frames, depth);
}

/* ---- the dump's queue section and checks ---- */

struct summary {
    uint64_t pushes, pops, discarded, moved_in, moved_out, depth_now, grows, shrinks, inlines;
    uint64_t held_at_first;
    uint64_t connections, open_now, broken_connections;
};

static void summarise(struct summary *s)
{
    memset(s, 0, sizeof *s);
    uint32_t n = (uint32_t)atomic_load(&record_count);
    if (n > MAX_RECORDS)
        n = MAX_RECORDS;
    for (uint32_t i = 0; records && i < n; i++) {
        const struct record *r = &records[i];
        s->pushes += r->pushes;
        s->pops += r->pops;
        s->discarded += r->discarded;
        s->moved_in += r->moved_in;
        s->moved_out += r->moved_out;
        s->held_at_first += r->held_at_first;
        s->depth_now += r->depth;
        s->grows += r->grows;
        s->shrinks += r->shrinks;
        s->inlines += r->inlines;
        if (r->conn != NULL) {
            s->connections++;
            s->open_now += r->open;
        }
        if (r->held_at_first + r->pushes + r->moved_in !=
            r->pops + r->discarded + r->moved_out + r->depth)
            s->broken_connections++;
    }
}

struct peak_group {
    uint32_t peak;
    uint64_t connections, allocs, bytes;
};

/* Connections grouped by peak depth, in increasing order (insertion into a small sorted table). */
static size_t group_by_peak(struct peak_group *groups, size_t max)
{
    size_t n = 0;
    uint32_t count = (uint32_t)atomic_load(&record_count);
    if (count > MAX_RECORDS)
        count = MAX_RECORDS;
    for (uint32_t i = 0; records && i < count; i++) {
        const struct record *r = &records[i];
        if (r->conn == NULL)
            continue;
        size_t g = 0;
        while (g < n && groups[g].peak < r->peak_depth)
            g++;
        if (g == n || groups[g].peak != r->peak_depth) {
            if (n == max)
                continue;
            memmove(&groups[g + 1], &groups[g], (n - g) * sizeof *groups);
            groups[g] = (struct peak_group){r->peak_depth, 0, 0, 0};
            n++;
        }
        groups[g].connections++;
        groups[g].allocs += r->allocs;
        groups[g].bytes += r->bytes;
    }
    return n;
}

/* key: [{depth, what: count}] for the non-zero buckets; the last bucket, with mark_last, says
 * "or_more". */
static void write_by_depth(struct qa_json *j, const char *key,
                           const atomic_uint_fast64_t counts[DEPTH_BUCKETS], const char *what,
                           bool mark_last)
{
    qa_json_key(j, key);
    qa_json_begin_array(j);
    for (unsigned d = 0; depths_counted() && d < DEPTH_BUCKETS; d++) {
        uint64_t count = atomic_load(&counts[d]);
        if (count == 0)
            continue;
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(depth)), qa_json_u64(j, d);
        if (mark_last && d == DEPTH_BUCKETS - 1)
            qa_json_key(j, QA_KEY(or_more)), qa_json_bool(j, true);
        qa_json_key(j, what), qa_json_u64(j, count);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
}

void qa_queue_write(struct qa_json *j)
{
    struct summary s;
    summarise(&s);
    qa_json_key(j, QA_KEY(queues));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(pushes)), qa_json_u64(j, s.pushes);
    qa_json_key(j, QA_KEY(pops)), qa_json_u64(j, s.pops);
    qa_json_key(j, QA_KEY(discarded)), qa_json_u64(j, s.discarded);
    qa_json_key(j, QA_KEY(moved)), qa_json_u64(j, s.moved_in);
    qa_json_key(j, QA_KEY(queued_now)), qa_json_u64(j, s.depth_now);
    qa_json_key(j, QA_KEY(grows)), qa_json_u64(j, s.grows);
    qa_json_key(j, QA_KEY(shrinks)), qa_json_u64(j, s.shrinks);
    qa_json_key(j, QA_KEY(returns_to_inline)), qa_json_u64(j, s.inlines);
    write_by_depth(j, QA_KEY(depth_histogram), depth_hist, QA_KEY(pushes), true);
    write_by_depth(j, QA_KEY(allocs_by_depth), allocs_by_depth, QA_KEY(allocs), false);
    static struct peak_group groups[1024];
    size_t n = group_by_peak(groups, sizeof groups / sizeof groups[0]);
    qa_json_key(j, QA_KEY(by_peak_depth));
    qa_json_begin_array(j);
    for (size_t g = 0; g < n; g++) {
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(peak_depth)), qa_json_u64(j, groups[g].peak);
        qa_json_key(j, QA_KEY(connections)), qa_json_u64(j, groups[g].connections);
        qa_json_key(j, QA_KEY(allocs)), qa_json_u64(j, groups[g].allocs);
        qa_json_key(j, QA_KEY(bytes)), qa_json_u64(j, groups[g].bytes);
        qa_json_key(j, QA_KEY(allocs_per_connection));
        qa_json_double(j, (double)groups[g].allocs / (double)groups[g].connections);
        qa_json_key(j, QA_KEY(bytes_per_connection));
        qa_json_double(j, (double)groups[g].bytes / (double)groups[g].connections);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
    qa_json_key(j, QA_KEY(connections));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(opened)), qa_json_u64(j, atomic_load(&opens));
    qa_json_key(j, QA_KEY(closed)), qa_json_u64(j, atomic_load(&closes));
    qa_json_key(j, QA_KEY(open_now));
    qa_json_begin_array(j);
    uint32_t count = (uint32_t)atomic_load(&record_count), listed = 0;
    for (uint32_t i = 0; records && i < count && i < MAX_RECORDS && listed < 100; i++)
        if (records[i].open) {
            qa_json_hex(j, (uintptr_t)records[i].conn);
            listed++;
        }
    qa_json_end_array(j);
    qa_json_end_object(j);
    qa_json_key(j, QA_KEY(attribution));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(by_hooks)), qa_json_u64(j, atomic_load(&hook_allocs));
    qa_json_key(j, QA_KEY(by_stack_patterns)), qa_json_u64(j, atomic_load(&stack_allocs));
    qa_json_key(j, QA_KEY(by_both)), qa_json_u64(j, atomic_load(&both_allocs));
    qa_json_end_object(j);
    qa_json_key(j, QA_KEY(events_without_connection)),
        qa_json_u64(j, atomic_load(&without_connection));
    qa_json_key(j, QA_KEY(refused_events)), qa_json_u64(j, atomic_load(&refused_events));
    qa_json_key(j, QA_KEY(records_dropped)), qa_json_u64(j, atomic_load(&records_dropped));
    qa_json_end_object(j);
}

enum check_status { CHECK_PASS, CHECK_FAIL, CHECK_NA };

/* A check's verdict: `status` pass, fail or n/a (a check that could not apply, with the reason in
 * `detail`); `passed` is true only for pass. */
static void check(struct qa_json *j, const char *name, enum check_status status, const char *detail)
{
    static const char *const words[] = {"pass", "fail", "n/a"};
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(name)), qa_json_str(j, name);
    qa_json_key(j, QA_KEY(status)), qa_json_str(j, words[status]);
    qa_json_key(j, QA_KEY(passed)), qa_json_bool(j, status == CHECK_PASS);
    qa_json_key(j, QA_KEY(detail)), qa_json_str(j, detail);
    qa_json_end_object(j);
}

static enum check_status verdict(bool holds)
{
    return holds ? CHECK_PASS : CHECK_FAIL;
}

static void check_depth_one(struct qa_json *j, bool hooks_seen)
{
    char detail[256];
    uint64_t v = atomic_load(&violations);
    if (qa_cfg.assert_depth1 == QA_ASSERT_OFF) {
        check(j, "depth_one_no_alloc", CHECK_NA, "QAUDIT_ASSERT_DEPTH1=off");
        return;
    }
    if (!hooks_seen) {
        check(j, "depth_one_no_alloc", CHECK_NA,
              "no queue hooks seen: the program reports no queue operations (qaudit/hooks.h)");
        return;
    }
    /* Formatted without printf: the checks are written in a fatal signal's dump too. */
    struct qa_text text;
    qa_text_begin(&text, detail, sizeof detail);
    if (v == 0) {
        qa_text_add(&text, "no allocation inside a queue operation at depth <= 1 (");
        qa_text_u64(&text, atomic_load(&hook_allocs));
        qa_text_add(&text, " allocations inside queue operations in all)");
    } else {
        qa_text_u64(&text, v);
        qa_text_add(&text,
                    " allocations inside queue operations at depth <= 1; the first at depth ");
        qa_text_u64(&text, first_violations[0].depth);
        qa_text_add(&text, ", ");
        qa_text_u64(&text, first_violations[0].size);
        qa_text_add(&text, " bytes");
    }
    check(j, "depth_one_no_alloc", verdict(v == 0), detail);
}

static void check_conservation(struct qa_json *j, const struct summary *s, bool hooks_seen)
{
    if (!hooks_seen) {
        check(j, "conservation", CHECK_NA, "no queue hooks seen: no pushes or pops to balance");
        return;
    }
    char detail[256], held[64] = "";
    bool balanced = s->held_at_first + s->pushes + s->moved_in ==
                    s->pops + s->discarded + s->moved_out + s->depth_now;
    struct qa_text text;
    if (s->held_at_first > 0) { /* queues first seen holding values: after an attach */
        qa_text_begin(&text, held, sizeof held);
        qa_text_add(&text, " + held when first seen ");
        qa_text_u64(&text, s->held_at_first);
    }
    qa_text_begin(&text, detail, sizeof detail); /* without printf: see check_depth_one */
    qa_text_add(&text, "pushes ");
    qa_text_u64(&text, s->pushes);
    qa_text_add(&text, held);
    qa_text_add(&text, " = pops ");
    qa_text_u64(&text, s->pops);
    qa_text_add(&text, " + discarded ");
    qa_text_u64(&text, s->discarded);
    qa_text_add(&text, " + still queued ");
    qa_text_u64(&text, s->depth_now);
    qa_text_add(&text, balanced ? "" : " does not hold");
    qa_text_add(&text, "; ");
    qa_text_u64(&text, s->broken_connections);
    qa_text_add(&text, " queues out of balance");
    check(j, "conservation", verdict(balanced && s->broken_connections == 0), detail);
}

/* Every connection opened was closed: only at the process's last dump, since a running server
 * has connections open by nature. */
static void check_connections(struct qa_json *j, const struct summary *s, bool final)
{
    uint64_t opened = atomic_load(&opens), closed = atomic_load(&closes);
    if (opened == 0) {
        check(j, "connections_closed", CHECK_NA, "no connection events seen (CONN_OPEN)");
        return;
    }
    if (!final && opened != closed) {
        check(j, "connections_closed", CHECK_NA,
              "a snapshot of a running process: its connections may still be open");
        return;
    }
    char detail[256];
    struct qa_text text; /* without printf: see check_depth_one */
    qa_text_begin(&text, detail, sizeof detail);
    qa_text_u64(&text, opened);
    qa_text_add(&text, " opened, ");
    qa_text_u64(&text, closed);
    qa_text_add(&text, " closed, ");
    qa_text_u64(&text, s->open_now);
    qa_text_add(&text, " open now");
    check(j, "connections_closed", verdict(opened == closed), detail);
}

void qa_queue_write_checks(struct qa_json *j, bool final)
{
    struct summary s;
    summarise(&s);
    uint32_t kept = (uint32_t)atomic_load(&violations_kept);
    if (kept > MAX_VIOLATIONS)
        kept = MAX_VIOLATIONS;
    bool hooks_seen = atomic_load(&opens) + s.pushes + s.pops + s.moved_in + s.moved_out != 0;
    qa_json_key(j, QA_KEY(checks));
    qa_json_begin_array(j);
    check_depth_one(j, hooks_seen);
    check_conservation(j, &s, hooks_seen);
    check_connections(j, &s, final);
    qa_json_end_array(j);

    qa_json_key(j, QA_KEY(depth_one_violations));
    qa_json_begin_array(j);
    for (uint32_t i = 0; i < kept; i++) {
        const struct violation *vi = &first_violations[i];
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(depth)), qa_json_u64(j, vi->depth);
        qa_json_key(j, QA_KEY(size)), qa_json_u64(j, vi->size);
        qa_json_frames(j, vi->frames, vi->frames_depth);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
}

void qa_queue_reset_after_fork(void)
{
    struct qa_thread *self = qa_self();
    if (self != NULL)
        self->cached_queue = self->cached_record = NULL;
    /* The child starts its own account: records and counters from zero. Nothing is written
     * where the parent kept nothing (no index, or no record in it): each page written here is
     * copied for the child. */
    if (slots) {
        if (atomic_load(&record_count) != 0)
            memset(slots, 0, (size_t)INDEX_SLOTS * sizeof *slots);
        for (unsigned i = 0; i < INDEX_SHARDS; i++)
            atomic_flag_clear(&shard_locks[i].lock);
    }
    bool counted = depths_counted();
    QA_RESET(record_count, 0);
    QA_RESET(records_dropped, 0);
    QA_RESET(refused_events, 0);
    QA_RESET(without_connection, 0);
    QA_RESET(opens, 0);
    QA_RESET(closes, 0);
    for (unsigned d = 0; counted && d < DEPTH_BUCKETS; d++) {
        QA_RESET(depth_hist[d], 0);
        QA_RESET(allocs_by_depth[d], 0);
    }
    QA_RESET(hook_allocs, 0);
    QA_RESET(stack_allocs, 0);
    QA_RESET(both_allocs, 0);
    QA_RESET(violations, 0);
    QA_RESET(violations_kept, 0);
}
