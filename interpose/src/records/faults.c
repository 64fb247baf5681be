/* Fault injection (QAUDIT_FAIL: fail the Nth allocation, every Nth, or with probability p from a
 * seed, optionally only for a size range or a stack matching a pattern) and poison (fill new
 * blocks with a byte, count at free the bytes that still hold it).
 * Context: the slow path under the guard (a thread's own injector state, no lock); the dump
 * writes the injected failures. */
#include <string.h>

#include "../base/random.h"
#include "records.h"

#define MAX_RECORDED 32

struct injected {
    uint64_t index, size;
    int depth;
    void *frames[QA_MAX_DEPTH];
};

static atomic_uint_fast64_t candidates QA_FORK_STATE, injected_total QA_FORK_STATE;
static struct injected recorded[MAX_RECORDED];
static atomic_uint_fast32_t recorded_count QA_FORK_STATE;

bool qa_fault_should_fail(struct qa_thread *t, size_t size, void **frames, int *depth)
{
    if (size < qa_cfg.fail_size_min || size > qa_cfg.fail_size_max)
        return false;
    if (qa_cfg.fail_site[0]) {
        if (*depth < 0)
            *depth = qa_capture(frames, qa_cfg.depth, false);
        if (!qa_frames_match(frames, *depth, QA_PATTERNS_FAIL))
            return false;
    }
    uint64_t index = atomic_fetch_add_explicit(&candidates, 1, memory_order_relaxed) + 1;
    bool fail;
    switch (qa_cfg.fail_mode) {
    case QA_FAIL_NTH:
        fail = index == qa_cfg.fail_n;
        break;
    case QA_FAIL_EVERY:
        fail = index % qa_cfg.fail_n == 0;
        break;
    case QA_FAIL_PROBABILITY:
        if (t->c.fail_index++ == 0) /* per thread: QAUDIT_FAIL's seed and the thread's order */
            t->c.rng ^= qa_cfg.fail_seed * 0x9e3779b97f4a7c15ull + 1;
        fail = (double)(qa_random_next(&t->c.rng) >> 11) / 9007199254740992.0 <
               qa_cfg.fail_probability;
        break;
    default:
        fail = false;
    }
    if (!fail)
        return false;
    atomic_fetch_add(&injected_total, 1);
    uint32_t slot = (uint32_t)atomic_fetch_add(&recorded_count, 1);
    if (slot < MAX_RECORDED) {
        if (*depth < 0)
            *depth = qa_capture(frames, qa_cfg.depth, false);
        struct injected *r = &recorded[slot];
        r->index = index;
        r->size = size;
        r->depth = *depth;
        memcpy(r->frames, frames, (size_t)*depth * sizeof *frames);
    }
    return true;
}

void qa_fault_write(struct qa_json *j)
{
    qa_json_key(j, QA_KEY(injected_failures));
    qa_json_begin_object(j);
    qa_json_key(j, QA_KEY(candidates)), qa_json_u64(j, atomic_load(&candidates));
    qa_json_key(j, QA_KEY(injected)), qa_json_u64(j, atomic_load(&injected_total));
    qa_json_key(j, QA_KEY(first));
    qa_json_begin_array(j);
    uint32_t n = (uint32_t)atomic_load(&recorded_count);
    for (uint32_t i = 0; i < n && i < MAX_RECORDED; i++) {
        qa_json_begin_object(j);
        qa_json_key(j, QA_KEY(candidate)), qa_json_u64(j, recorded[i].index);
        qa_json_key(j, QA_KEY(size)), qa_json_u64(j, recorded[i].size);
        qa_json_frames(j, recorded[i].frames, recorded[i].depth);
        qa_json_end_object(j);
    }
    qa_json_end_array(j);
    qa_json_end_object(j);
}

void qa_poison_fill(void *p, size_t size)
{
    memset(p, qa_cfg.poison_byte, size);
}

uint64_t qa_poison_count(const void *p, size_t size)
{
    const unsigned char *bytes = p;
    uint64_t n = 0;
    for (size_t i = 0; i < size; i++)
        n += bytes[i] == qa_cfg.poison_byte;
    return n;
}
