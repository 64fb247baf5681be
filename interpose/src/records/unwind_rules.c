/* The `always` stack walk without libunwind on the common path: each return address's unwind rule
 * (cfi_rule.c) kept in one table the process's threads share without locks, and the walk over
 * those rules from the interposer's own frame. A frame whose rule is not known (no FDE, a rule
 * cfi_rule.c does not follow, a frame off the thread's stack) ends the walk with -1 and the whole
 * stack is taken by the libraries as before (stacks.c). Context: the slow path under the guard. */
#include <string.h>

#include "records.h"

/* 16,384 entries of 16 bytes (256 KiB of address space, in .bss: a page is resident once an
 * entry on it is written, so the table costs what the program's distinct return addresses
 * fill). Written once per key; a rule learnt before the last dlclose is learnt again (the epoch).
 * Full (8 probes taken): the rule is read from the FDE every time, still exact. */
enum { RULE_BITS = 14, RULE_PROBES = 8, EPOCH_SHIFT = 40 };
#define RULE_MASK ((1u << RULE_BITS) - 1)
#define EPOCH_MASK ((1ull << (64 - EPOCH_SHIFT)) - 1)

struct rule_entry {
    _Atomic uintptr_t key;
    _Atomic uint64_t rule; /* QA_RULE_* | QA_RULE_VALID | epoch << EPOCH_SHIFT; 0 being written */
};
static struct rule_entry rules[1u << RULE_BITS];
static atomic_uint_fast64_t epoch;

void qa_rules_forget(void)
{
    atomic_fetch_add(&epoch, 1);
}

/* The walk's state: the loader guard taken at the first miss (the FDE lookup may walk the
 * module list), never on a walk the table answers. */
struct walk {
    struct qa_thread *t;
    uint64_t stamp; /* QA_RULE_VALID | epoch << EPOCH_SHIFT */
    bool entered;
};

static uint64_t learn(struct walk *w, struct rule_entry *e, uintptr_t ip)
{
    if (!w->entered && w->t != NULL) {
        qa_loader_enter(w->t);
        w->entered = true;
    }
    uint64_t rule = qa_cfi_rule(ip);
    if (e == NULL)
        return rule;
    uintptr_t empty = 0;
    if (atomic_compare_exchange_strong(&e->key, &empty, ip) || empty == ip)
        atomic_store_explicit(&e->rule, rule | w->stamp, memory_order_release);
    return rule;
}

static inline uint32_t slot_of(uintptr_t ip)
{
    return (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> (64 - RULE_BITS));
}

/* The entry's rule is one the walk takes without a second look: learnt in this epoch, and known
 * (an unknown one takes rule_of's path, out of line; the outermost frame's is in every stack,
 * and a call for it cost 29 instructions a stack). */
#define RULE_PLAIN_MASK                                                                            \
    (~(uint64_t)(QA_RULE_CFA_RBP | QA_RULE_RBP_SAVED | QA_RULE_LAST | 0xffffffffu))

/* ip's rule from the table (its probes after the first), or learnt and kept. */
static __attribute__((noinline)) uint64_t rule_of(struct walk *w, uintptr_t ip)
{
    uint32_t i = slot_of(ip);
    for (unsigned probe = 0; probe < RULE_PROBES; probe++, i = (i + 1) & RULE_MASK) {
        struct rule_entry *e = &rules[i];
        uintptr_t key = atomic_load_explicit(&e->key, memory_order_acquire);
        if (key == ip) {
            uint64_t rule = atomic_load_explicit(&e->rule, memory_order_acquire);
            if ((rule & ~(uint64_t)QA_RULE_BITS) == w->stamp)
                return rule;
            return learn(w, e, ip);
        }
        if (key == 0)
            return learn(w, e, ip);
    }
    return learn(w, NULL, ip);
}

/* The interposer's own frames, by their frame pointers (it is built with them): the first
 * frame pointer whose return address is the program's, or NULL. */
static void **program_frame(uintptr_t lo, uintptr_t hi)
{
    void **fp = __builtin_frame_address(0);
    for (;;) {
        uintptr_t at = (uintptr_t)fp;
        if (at < lo || at + 16 > hi || (at & 7))
            return NULL;
        if (!qa_ours(fp[1]))
            return fp;
        void **next = fp[0];
        if (next <= fp)
            return NULL;
        fp = next;
    }
}

static int walk(struct walk *w, void **frames, unsigned max, uintptr_t lo, uintptr_t hi,
                bool *truncated)
{
    void **fp = program_frame(lo, hi);
    if (fp == NULL)
        return -1;
    uintptr_t ip = (uintptr_t)fp[1], sp = (uintptr_t)(fp + 2), bp = (uintptr_t)fp[0];
    uintptr_t span = hi - lo - 8; /* a word at lo + x is on the stack when x <= span */
    void **out = frames, **end = frames + max;
    while (ip != 0) {
        if (out == end) {
            *truncated = true;
            break;
        }
        *out++ = (void *)ip;
        struct rule_entry *e = &rules[slot_of(ip)];
        uint64_t rule = atomic_load_explicit(&e->rule, memory_order_acquire);
        if (atomic_load_explicit(&e->key, memory_order_relaxed) != ip ||
            (rule & RULE_PLAIN_MASK) != w->stamp) {
            rule = rule_of(w, ip);
            if (rule & QA_RULE_UNKNOWN)
                return -1;
        }
        if (rule & QA_RULE_LAST)
            break;
        uintptr_t cfa = ((rule & QA_RULE_CFA_RBP) ? bp : sp) + (uintptr_t)(int16_t)rule;
        /* The caller's frame is above this one, on the thread's stack: else not followed. */
        if (cfa - sp - 1 >= hi - sp)
            return -1;
        if (rule & QA_RULE_RBP_SAVED) {
            uintptr_t at = cfa + (uintptr_t)(int16_t)(rule >> 16);
            if (at - lo > span)
                return -1;
            bp = *(uintptr_t *)at;
        }
        ip = *(uintptr_t *)(cfa - 8);
        sp = cfa;
    }
    return (int)(out - frames);
}

int qa_rules_walk(void **frames, unsigned max, uintptr_t lo, uintptr_t hi, struct qa_thread *t,
                  bool *truncated)
{
    struct walk w = {t, 0, false};
    w.stamp = QA_RULE_VALID | (atomic_load_explicit(&epoch, memory_order_acquire) & EPOCH_MASK)
                                  << EPOCH_SHIFT;
    int n = walk(&w, frames, max, lo, hi, truncated);
    if (w.entered)
        qa_loader_leave(w.t);
    return n;
}
