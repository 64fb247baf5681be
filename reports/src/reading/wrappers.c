/* Allocation wrappers recognised from the stacks themselves, beside the ones the skip globs name:
 * a function whose allocations all go straight to the allocator on behalf of many callers
 * (nginx's ngx_alloc, PostgreSQL's palloc and its allocator's call without a symbol) is every
 * site's first frame in a program that has one, and says nothing of why the memory was taken.
 *
 * A function (by name; a frame without one by its call instruction, module and offset) is a
 * wrapper when, with the wrappers already found folded:
 *  - it forwards only: wherever it appears, every frame inside it is the C or C++ runtime's or a
 *    wrapper's (it never allocates through a function of the program's own);
 *  - it forwards its callers' sizes: at each of its call instructions that two or more callers
 *    reach, their allocations do not all have one size (a function taking the same size for
 *    every caller allocates an object of its own: OpenSSL's OPENSSL_LH_new);
 *  - its name says it allocates (alloc, memalign, dup, pool, operator new), or it has none: a
 *    function whose sizes vary with its data (PostgreSQL's PathNameOpenFilePerm keeping a file
 *    name, errmsg, lappend) forwards only too;
 *  - it does so for REPORT_WRAPPER_CALLERS distinct callers or more, counted through callers
 *    that are themselves wrappers of it (nginx's ngx_memalign has two callers, ngx_create_pool
 *    and a static function that allocates for nine).
 * Rounds find the wrappers of wrappers (palloc once the allocator's call under it is folded). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/grow_array.h"
#include "reports_reading.h"

#define MAX_ROUNDS 8
#define CHAIN_DEPTH 3
#define INNER_KEPT                                                                                 \
    4 /* distinct functions inside one that are remembered; more: it is no wrapper                 \
       */

/* A function as the rule sees it: by name, or a frame without one by module and offset. */
struct key {
    const char *name;
    uint32_t module;
    uint64_t offset;
};

/* What a call instruction of a function says of its sizes: the first caller and size seen there,
 * whether another caller reached it, and whether any size differed. */
struct call_site {
    uint32_t module;
    uint64_t offset;
    size_t first_caller;
    double first_size;
    bool other_caller, other_size;
};

struct entry {
    struct key key;
    bool runtime;    /* a frame of the C or C++ runtime: never a wrapper */
    bool recognised; /* a wrapper (folded in later rounds) */
    /* per round */
    bool leaf;                /* the first frame of some site once the wrappers are folded */
    size_t inner[INNER_KEPT]; /* entries found inside it that are neither runtime nor wrappers */
    size_t inner_count;
    bool inner_many;         /* more than INNER_KEPT of them */
    struct call_site *calls; /* its call instructions (leaf or not) */
    size_t call_count, call_capacity;
    size_t *callers; /* distinct entries that call it */
    size_t caller_count, caller_capacity;
    size_t callers_counted; /* fan-in through its wrapping callers (when recognised) */
    unsigned stamp;         /* fan_in's visit mark */
};

struct table {
    struct entry *entries;
    size_t count, capacity;
    size_t *slots; /* open addressing over entries */
    size_t slot_count;
    unsigned stamp;
};

static uint64_t key_hash(const struct key *k)
{
    uint64_t h = 1469598103934665603ull;
    if (k->name != NULL) {
        for (const char *c = k->name; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        return h;
    }
    h = (h ^ k->offset) * 1099511628211ull;
    return (h ^ k->module) * 1099511628211ull;
}

static bool same_key(const struct key *a, const struct key *b)
{
    if (a->name != NULL || b->name != NULL)
        return a->name != NULL && b->name != NULL && strcmp(a->name, b->name) == 0;
    return a->module == b->module && a->offset == b->offset;
}

static struct key frame_key(const struct report_frame *f)
{
    if (f->location_count > 0 && f->locations[f->location_count - 1].function != NULL)
        return (struct key){f->locations[f->location_count - 1].function, 0, 0};
    return (struct key){NULL, f->module, f->offset};
}

/* The entry of frame f, added when new; SIZE_MAX when memory ran out. */
static size_t entry_of(const struct report *r, struct table *t, const struct report_frame *f)
{
    struct key k = frame_key(f);
    size_t slot = key_hash(&k) & (t->slot_count - 1);
    while (t->slots[slot] != SIZE_MAX && !same_key(&t->entries[t->slots[slot]].key, &k))
        slot = (slot + 1) & (t->slot_count - 1);
    if (t->slots[slot] != SIZE_MAX)
        return t->slots[slot];
    struct entry *e = array_push(&t->entries, &t->count, &t->capacity, sizeof *e);
    if (e == NULL)
        return SIZE_MAX;
    e->key = k;
    e->runtime = report_runtime_frame(r, f);
    t->slots[slot] = t->count - 1;
    return t->count - 1;
}

/* A function the rule may fold: named as an allocation function, or without a name. */
static bool allocation_name(const char *name)
{
    static const char *const words[] = {"alloc", "memalign", "dup", "pool", "operator new"};
    if (name == NULL)
        return true;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcasestr(name, words[i]) != NULL)
            return true;
    return false;
}

static void entry_reset(struct entry *e)
{
    e->leaf = false;
    e->inner_count = 0;
    e->inner_many = false;
    e->call_count = 0;
    e->caller_count = 0;
}

static void note_inner(struct entry *e, size_t inner)
{
    for (size_t i = 0; i < e->inner_count; i++)
        if (e->inner[i] == inner)
            return;
    if (e->inner_count == INNER_KEPT)
        e->inner_many = true;
    else
        e->inner[e->inner_count++] = inner;
}

static void note_caller(struct entry *e, size_t caller)
{
    for (size_t i = 0; i < e->caller_count; i++)
        if (e->callers[i] == caller)
            return;
    size_t *slot = array_push(&e->callers, &e->caller_count, &e->caller_capacity, sizeof *slot);
    if (slot != NULL)
        *slot = caller;
}

/* The sizes a call instruction of e was asked for, one site's mean size at a time. */
static void note_call(struct entry *e, const struct report_frame *f, size_t caller, double size)
{
    struct call_site *c = NULL;
    for (size_t i = 0; i < e->call_count && c == NULL; i++)
        if (e->calls[i].module == f->module && e->calls[i].offset == f->offset)
            c = &e->calls[i];
    if (c == NULL) {
        c = array_push(&e->calls, &e->call_count, &e->call_capacity, sizeof *c);
        if (c != NULL)
            *c = (struct call_site){f->module, f->offset, caller, size, false, false};
        return;
    }
    c->other_caller = c->other_caller || caller != c->first_caller;
    c->other_size = c->other_size || size != c->first_size;
}

/* One site's frames into the table: the entry of each frame outside the folded wrappers, its
 * caller and call instruction, and what lies inside it. */
static void add_site(const struct report *r, struct table *t, const struct report_site *s,
                     size_t *ids)
{
    const struct report_stack *stack = &s->stack;
    for (size_t i = 0; i < stack->frame_count; i++)
        ids[i] = entry_of(r, t, &stack->frames[i]);
    double size = s->est.allocs > 0 ? s->est.bytes / s->est.allocs : 0;
    size_t first = SIZE_MAX; /* the first frame neither runtime nor folded */
    for (size_t i = 0; i < stack->frame_count; i++) {
        if (ids[i] == SIZE_MAX)
            return;
        struct entry *e = &t->entries[ids[i]];
        if (e->runtime || e->recognised)
            continue;
        if (first == SIZE_MAX) {
            first = i;
            e->leaf = true;
        }
        size_t caller = i + 1 < stack->frame_count ? ids[i + 1] : SIZE_MAX;
        note_caller(e, caller);
        note_call(e, &stack->frames[i], caller, size);
        for (size_t k = first; k < i; k++) { /* what lies inside it */
            const struct entry *in = &t->entries[ids[k]];
            if (!in->runtime && !in->recognised && ids[k] != ids[i])
                note_inner(e, ids[k]);
        }
    }
}

/* No call instruction of e that two callers reach asks one size for them all. */
static bool forwards_sizes(const struct entry *e)
{
    for (size_t i = 0; i < e->call_count; i++)
        if (e->calls[i].other_caller && !e->calls[i].other_size)
            return false;
    return true;
}

/* e may be a wrapper for the functions in within (besides the wrappers found): nothing else
 * inside it, sizes forwarded, an allocation function's name or none. */
static bool wrapper_shape(const struct entry *e, const size_t *within, size_t within_count)
{
    if (e->runtime || e->recognised || e->inner_many || !forwards_sizes(e) ||
        !allocation_name(e->key.name))
        return false;
    for (size_t i = 0; i < e->inner_count; i++) {
        bool allowed = false;
        for (size_t k = 0; k < within_count && !allowed; k++)
            allowed = e->inner[i] == within[k];
        if (!allowed)
            return false;
    }
    return true;
}

/* The distinct callers e allocates for, counted through callers that are wrappers of it (and of
 * those, CHAIN_DEPTH deep); each is marked with the table's stamp. */
static size_t fan_in(struct table *t, size_t e, size_t *chain, size_t depth)
{
    size_t counted = 0;
    chain[depth] = e;
    for (size_t i = 0; i < t->entries[e].caller_count; i++) {
        size_t c = t->entries[e].callers[i];
        if (c == SIZE_MAX) /* the root: nothing called it */
            continue;
        struct entry *caller = &t->entries[c];
        if (caller->stamp == t->stamp)
            continue;
        caller->stamp = t->stamp;
        if (depth + 1 < CHAIN_DEPTH && wrapper_shape(caller, chain, depth + 1))
            counted += fan_in(t, c, chain, depth + 1);
        else
            counted++;
    }
    return counted;
}

/* One round: every site's frames into the table afresh; the entries that are now wrappers
 * recognised. Returns how many were. */
static size_t round_of(const struct report *r, struct table *t, size_t *ids)
{
    for (size_t i = 0; i < t->count; i++)
        entry_reset(&t->entries[i]);
    for (size_t i = 0; i < r->site_count; i++)
        add_site(r, t, &r->sites[i], ids);
    size_t found = 0, chain[CHAIN_DEPTH];
    bool *now = calloc(t->count + 1, sizeof *now);
    if (now == NULL)
        return 0;
    for (size_t i = 0; i < t->count; i++) {
        struct entry *e = &t->entries[i];
        if (!e->leaf || !wrapper_shape(e, NULL, 0))
            continue;
        t->stamp++;
        e->stamp = t->stamp;
        size_t callers = fan_in(t, i, chain, 0);
        if (callers >= REPORT_WRAPPER_CALLERS) {
            now[i] = true;
            e->callers_counted = callers;
            found++;
        }
    }
    for (size_t i = 0; i < t->count; i++) /* after the round: each judged on the same folding */
        t->entries[i].recognised = t->entries[i].recognised || now[i];
    free(now);
    return found;
}

static void keep_wrapper(struct report *r, const struct entry *e)
{
    struct report_wrapper *w =
        array_push(&r->wrappers, &r->wrapper_count, &r->wrapper_capacity, sizeof *w);
    if (w == NULL)
        return;
    w->named = e->key.name != NULL;
    w->module = e->key.module;
    w->offset = e->key.offset;
    w->callers = e->callers_counted;
    if (w->named) {
        w->name = report_copy_string(e->key.name);
        return;
    }
    const char *module = e->key.module != REPORT_NO_MODULE && e->key.module < r->module_count
                             ? report_path_base_name(r->modules[e->key.module].path)
                             : "";
    if (asprintf(&w->name, "%s%s0x%llx", module, module[0] ? "+" : "",
                 (unsigned long long)e->key.offset) < 0)
        w->name = NULL;
}

void report_wrappers_recognise(struct report *r)
{
    size_t depth = 1, frames = 0; /* the distinct functions are at most the frames */
    for (size_t i = 0; i < r->site_count; i++) {
        depth = r->sites[i].stack.frame_count > depth ? r->sites[i].stack.frame_count : depth;
        frames += r->sites[i].stack.frame_count;
    }
    struct table t = {0};
    t.slot_count = 64;
    while (t.slot_count < 2 * frames)
        t.slot_count *= 2;
    t.slots = malloc(t.slot_count * sizeof *t.slots);
    size_t *ids = malloc(depth * sizeof *ids);
    if (t.slots != NULL && ids != NULL) {
        memset(t.slots, 0xff, t.slot_count * sizeof *t.slots);
        for (int round = 0; round < MAX_ROUNDS && round_of(r, &t, ids) > 0; round++)
            ;
    }
    for (size_t i = 0; i < t.count; i++) {
        if (t.entries[i].recognised)
            keep_wrapper(r, &t.entries[i]);
        free(t.entries[i].calls);
        free(t.entries[i].callers);
    }
    free(t.entries);
    free(t.slots);
    free(ids);
}

/* The index in r->modules of other's module m (same path and build id), or REPORT_NO_MODULE. */
static uint32_t same_module_in(const struct report *r, const struct report *other, uint32_t m)
{
    if (m >= other->module_count)
        return REPORT_NO_MODULE;
    for (size_t i = 0; i < r->module_count; i++)
        if (strcmp(r->modules[i].path, other->modules[m].path) == 0 &&
            strcmp(r->modules[i].build_id, other->modules[m].build_id) == 0)
            return (uint32_t)i;
    return REPORT_NO_MODULE;
}

size_t report_wrappers_adopt(struct report *r, const struct report *other)
{
    size_t added = 0;
    for (size_t i = 0; i < other->wrapper_count; i++) {
        const struct report_wrapper *w = &other->wrappers[i];
        struct key k = {w->named ? w->name : NULL,
                        w->named ? 0 : same_module_in(r, other, w->module), w->offset};
        if (!w->named && k.module == REPORT_NO_MODULE)
            continue; /* a module this run did not load */
        bool known = false;
        for (size_t j = 0; j < r->wrapper_count && !known; j++) {
            const struct report_wrapper *mine = &r->wrappers[j];
            struct key have = {mine->named ? mine->name : NULL, mine->module, mine->offset};
            known = same_key(&have, &k);
        }
        struct report_wrapper *copy =
            known ? NULL
                  : array_push(&r->wrappers, &r->wrapper_count, &r->wrapper_capacity, sizeof *copy);
        if (copy == NULL)
            continue;
        *copy = (struct report_wrapper){report_copy_string(w->name), w->named, k.module, k.offset,
                                        w->callers};
        added++;
    }
    return added;
}

bool report_wrapper_recognised(const struct report *r, const struct report_frame *f)
{
    struct key k = frame_key(f);
    for (size_t i = 0; i < r->wrapper_count; i++) {
        const struct report_wrapper *w = &r->wrappers[i];
        struct key wk = {w->named ? w->name : NULL, w->module, w->offset};
        if (same_key(&wk, &k))
            return true;
    }
    return false;
}

/* The C and C++ runtime's frames, and qaudit's own: the preload's dlopen stands for the call the
 * program made (a library's constructor allocates under it). */
bool report_runtime_frame(const struct report *r, const struct report_frame *f)
{
    const char *path = f->module != REPORT_NO_MODULE ? r->modules[f->module].path : "";
    return strstr(path, "/libc.so") || strstr(path, "/libstdc++") || strstr(path, "/ld-linux") ||
           strstr(path, "/libqaudit-");
}
