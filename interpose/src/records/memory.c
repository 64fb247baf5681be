/* The process's anonymous memory at start-up and at each dump, beside the counted live bytes:
 * what no interposed call accounts for (a statically linked allocator, private mmap arenas)
 * shows as anonymous growth the counted bytes do not explain. Read from /proc/self/smaps_rollup
 * ("Anonymous:") or, without it, /proc/self/statm (resident minus shared pages) into a stack
 * buffer with qa_file_slurp, which touches its descriptor only while it is still its own (a
 * program may close or reuse any number): no malloc, no stdio, safe in a signal handler.
 * Context: start-up and every dump, fatal signal handlers included. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "records.h"

/* What the counted bytes are allowed not to explain: the interposer's own tables, the loader's
 * and libc's bookkeeping, thread stacks, allocator metadata (docs/design.md). */
#define ALLOWANCE_BASE (16u << 20)
#define ALLOWANCE_PER_THREAD (256u << 10)

enum source { SOURCE_NONE, SOURCE_SMAPS_ROLLUP, SOURCE_STATM };
static const char *const source_names[] = {"none", "smaps_rollup", "statm"};
static enum source source;
static uint64_t at_start;
static uint64_t page_size; /* read at start-up: sysconf is not for signal handlers */

static bool read_small(const char *path, char *buf, size_t size)
{
    int saved = errno;
    ssize_t len = qa_file_slurp(path, buf, size);
    errno = saved;
    return len > 0;
}

/* The decimal at s (spaces first), and where it ends. */
static uint64_t decimal(const char *s, const char **end)
{
    while (*s == ' ' || *s == '\t')
        s++;
    uint64_t v = 0;
    const char *start = s;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (uint64_t)(*s - '0');
    *end = s == start ? NULL : s;
    return v;
}

static bool from_smaps_rollup(uint64_t *bytes)
{
    char buf[4096];
    if (!read_small("/proc/self/smaps_rollup", buf, sizeof buf))
        return false;
    const char *line = strstr(buf, "\nAnonymous:");
    if (line == NULL)
        return false;
    const char *end;
    uint64_t kb = decimal(line + strlen("\nAnonymous:"), &end);
    if (end == NULL)
        return false;
    *bytes = kb * 1024;
    return true;
}

/* One reading of statm for a whole dump (its timeline's last point and the anonymous memory
 * check), taken by qa_memory_dump_begin under the dump lock: one read of /proc, not two. */
static struct {
    bool valid;
    uint64_t resident, shared;
} dump_reading QA_FORK_STATE;

/* /proc/self/statm's resident and shared sizes, in bytes. */
static bool read_statm(uint64_t *resident, uint64_t *shared)
{
    if (dump_reading.valid) {
        *resident = dump_reading.resident;
        *shared = dump_reading.shared;
        return true;
    }
    char buf[256];
    if (!read_small("/proc/self/statm", buf, sizeof buf))
        return false;
    const char *end;
    (void)decimal(buf, &end); /* size */
    *resident = end ? decimal(end, &end) * page_size : 0;
    *shared = end ? decimal(end, &end) * page_size : 0;
    return end != NULL;
}

static bool from_statm(uint64_t *bytes)
{
    uint64_t resident, shared;
    if (!read_statm(&resident, &shared) || shared > resident)
        return false;
    *bytes = resident - shared;
    return true;
}

void qa_memory_dump_begin(void)
{
    uint64_t resident, shared;
    dump_reading.valid = false;
    dump_reading.valid = read_statm(&resident, &shared);
    dump_reading.resident = resident;
    dump_reading.shared = shared;
}

void qa_memory_dump_end(void)
{
    dump_reading.valid = false;
}

uint64_t qa_resident_bytes(void)
{
    uint64_t resident, shared;
    return read_statm(&resident, &shared) ? resident : 0;
}

static bool anonymous_now(enum source from, uint64_t *bytes)
{
    switch (from) {
    case SOURCE_SMAPS_ROLLUP:
        return from_smaps_rollup(bytes);
    case SOURCE_STATM:
        return from_statm(bytes);
    default:
        return false;
    }
}

/* At start-up: the same source is used for every later reading, so that the two figures compare.
 * A forked child keeps its parent's reading (reading smaps_rollup walks every mapping: a large
 * part of a small child's life): its counted bytes include what it inherited, and the parent's
 * peak up to the fork stands for the memory the parent's allocator kept. */
void qa_memory_start(void)
{
    page_size = (uint64_t)sysconf(_SC_PAGESIZE);
    source = SOURCE_SMAPS_ROLLUP;
    if (anonymous_now(source, &at_start))
        return;
    source = SOURCE_STATM;
    if (anonymous_now(source, &at_start))
        return;
    source = SOURCE_NONE;
    at_start = 0;
}

/* The precision fields on anonymous memory; false when the counted bytes, at their peak plus
 * the allowance, explain less than half of the growth since start-up. */
bool qa_memory_write(struct qa_json *j)
{
    uint64_t now = 0;
    enum source read_from = source;
    /* statm first (it reads one line; smaps_rollup walks every mapping, a large part of a short
     * child's life): below twice the smallest allowance the growth can raise no alarm, and the
     * anonymous resident statm gives is then enough to write. */
    bool known = source == SOURCE_SMAPS_ROLLUP && from_statm(&now) &&
                 (now <= at_start || now - at_start < 2 * (uint64_t)ALLOWANCE_BASE);
    if (known)
        read_from = SOURCE_STATM;
    else
        known = anonymous_now(read_from, &now);
    struct qa_counters c;
    qa_sum_counters(&c, NULL);
    int64_t peak = qa_peak_live();
    int64_t basis = peak > qa_inherited.parent_peak ? peak : qa_inherited.parent_peak;
    uint64_t growth = known && now > at_start ? now - at_start : 0;
    /* Per thread record: records are reused, so they follow the threads alive at once (whose
     * stacks are anonymous memory), not every thread the program ever made. */
    uint64_t allowance = ALLOWANCE_BASE + qa_thread_total() * ALLOWANCE_PER_THREAD;
    uint64_t explained = (basis > 0 ? (uint64_t)basis : 0) + allowance;
    bool unexplained = known && 2 * explained < growth;
    qa_json_key(j, QA_KEY(anonymous_memory_from)),
        qa_json_str(j, source_names[known ? read_from : 0]);
    qa_json_key(j, QA_KEY(anonymous_bytes_at_start)), qa_json_u64(j, at_start);
    qa_json_key(j, QA_KEY(anonymous_bytes)), qa_json_u64(j, now);
    qa_json_key(j, QA_KEY(counted_live_bytes)), qa_json_i64(j, qa_live_bytes_total(&c));
    qa_json_key(j, QA_KEY(counted_peak_live_bytes)), qa_json_i64(j, peak);
    if (qa_is_forked_child())
        qa_json_key(j, QA_KEY(parent_peak_live_bytes)), qa_json_i64(j, qa_inherited.parent_peak);
    qa_json_key(j, QA_KEY(anonymous_allowance)), qa_json_u64(j, allowance);
    qa_json_key(j, QA_KEY(unexplained_anonymous)), qa_json_bool(j, unexplained);
    return !unexplained;
}
