/* Sharded hash table with per-shard incremental rehash (two bucket arrays, one bucket moved per
 * operation while a resize is under way), keyed by XXH3 with a per-process random seed, or the
 * one given (ringkv --hash-seed): which shards a run's keys reach, and so when their tables are
 * allocated and resized, follows from the seed. */
#include "store.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <xxhash.h>

#define SHARD_BITS 8
#define SHARD_COUNT (1u << SHARD_BITS)
#define INITIAL_BUCKETS 16u
#define EMPTY_VISITS_PER_STEP 16

struct entry {
    struct entry *next;
    uint64_t hash;
    int64_t expire_at_ms;
    size_t klen, vlen;
    char bytes[]; /* key, then value */
};

struct table {
    struct entry **buckets;
    size_t size; /* a power of two, or 0 */
    size_t used;
};

struct shard {
    pthread_mutex_t lock;
    struct table tables[2]; /* tables[1] is the target while rehashing */
    size_t rehash_next;     /* next bucket of tables[0] to move; meaningful while rehashing */
    uint64_t expires, bytes;
};

struct store {
    uint64_t seed;
    struct shard shards[SHARD_COUNT];
};

static uint64_t hash_key(const struct store *store, const char *key, size_t klen)
{
    return XXH3_64bits_withSeed(key, klen, store->seed);
}

/* Low bits pick the bucket, high bits the shard, so both stay well spread. */
static struct shard *shard_for(struct store *store, uint64_t hash)
{
    return &store->shards[hash >> (64 - SHARD_BITS)];
}

static bool rehashing(const struct shard *shard)
{
    return shard->tables[1].buckets != NULL;
}

static size_t entry_size(const struct entry *e)
{
    return sizeof *e + e->klen + e->vlen;
}

static void entry_free(struct shard *shard, struct entry *e)
{
    shard->bytes -= entry_size(e);
    if (e->expire_at_ms)
        shard->expires--;
    free(e);
}

/* Moves one non-empty bucket of tables[0] (visiting at most a few empty ones) into tables[1]. */
static void rehash_step(struct shard *shard)
{
    struct table *from = &shard->tables[0], *to = &shard->tables[1];
    for (int visits = 0; visits < EMPTY_VISITS_PER_STEP && shard->rehash_next < from->size;
         visits++) {
        struct entry *e = from->buckets[shard->rehash_next];
        from->buckets[shard->rehash_next++] = NULL;
        if (e == NULL)
            continue;
        while (e != NULL) {
            struct entry *next = e->next;
            size_t b = e->hash & (to->size - 1);
            e->next = to->buckets[b];
            to->buckets[b] = e;
            from->used--;
            to->used++;
            e = next;
        }
        break;
    }
    if (shard->rehash_next == from->size) {
        free(from->buckets);
        *from = *to;
        memset(to, 0, sizeof *to);
    }
}

/* Starts a resize to size buckets; without memory the shard simply stays as it is. */
static void rehash_start(struct shard *shard, size_t size)
{
    struct entry **buckets = calloc(size, sizeof *buckets);
    if (buckets == NULL)
        return;
    if (shard->tables[0].buckets == NULL) {
        shard->tables[0] = (struct table){buckets, size, 0};
        return;
    }
    shard->tables[1] = (struct table){buckets, size, 0};
    shard->rehash_next = 0;
}

/* Grows at load factor 1, shrinks below 1/8; every operation does one step of a resize. */
static void maintain(struct shard *shard)
{
    if (rehashing(shard)) {
        rehash_step(shard);
        return;
    }
    struct table *t = &shard->tables[0];
    if (t->buckets == NULL)
        rehash_start(shard, INITIAL_BUCKETS);
    else if (t->used >= t->size)
        rehash_start(shard, t->size * 2);
    else if (t->size > INITIAL_BUCKETS && t->used < t->size / 8)
        rehash_start(shard, t->size / 2);
}

/* The link that points at the entry for key, or NULL; *owner is the table holding it. */
static struct entry **find_link(struct shard *shard, uint64_t hash, const char *key, size_t klen,
                                struct table **owner)
{
    for (int i = 0; i < 2; i++) {
        struct table *t = &shard->tables[i];
        if (t->buckets == NULL)
            continue;
        for (struct entry **link = &t->buckets[hash & (t->size - 1)]; *link;
             link = &(*link)->next) {
            struct entry *e = *link;
            if (e->hash == hash && e->klen == klen && memcmp(e->bytes, key, klen) == 0) {
                *owner = t;
                return link;
            }
        }
    }
    return NULL;
}

static void unlink_entry(struct shard *shard, struct table *t, struct entry **link)
{
    struct entry *e = *link;
    *link = e->next;
    t->used--;
    entry_free(shard, e);
}

/* Finds a live entry, deleting it if it has expired. */
static struct entry **find_live(struct shard *shard, uint64_t hash, const char *key, size_t klen,
                                int64_t now_ms, struct table **owner)
{
    struct entry **link = find_link(shard, hash, key, klen, owner);
    if (link == NULL || *link == NULL)
        return NULL;
    struct entry *e = *link;
    if (e->expire_at_ms && e->expire_at_ms <= now_ms) {
        unlink_entry(shard, *owner, link);
        return NULL;
    }
    return link;
}

struct store *store_create(void)
{
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, 0) != sizeof seed)
        seed = 0x9e3779b97f4a7c15ull;
    return store_create_seeded(seed);
}

struct store *store_create_seeded(uint64_t seed)
{
    struct store *store = calloc(1, sizeof *store);
    if (store == NULL)
        return NULL;
    store->seed = seed;
    for (size_t i = 0; i < SHARD_COUNT; i++)
        pthread_mutex_init(&store->shards[i].lock, NULL);
    return store;
}

static void shard_clear(struct shard *shard)
{
    for (int i = 0; i < 2; i++) {
        struct table *t = &shard->tables[i];
        for (size_t b = 0; b < t->size; b++) {
            struct entry *e = t->buckets[b];
            while (e != NULL) {
                struct entry *next = e->next;
                entry_free(shard, e);
                e = next;
            }
        }
        free(t->buckets);
        memset(t, 0, sizeof *t);
    }
}

void store_destroy(struct store *store)
{
    if (store == NULL)
        return;
    for (size_t i = 0; i < SHARD_COUNT; i++) {
        shard_clear(&store->shards[i]);
        pthread_mutex_destroy(&store->shards[i].lock);
    }
    free(store);
}

/* The shard of a hashed key, locked, with one step of any resize under way done. */
static struct shard *lock_hashed(struct store *store, uint64_t hash)
{
    struct shard *shard = shard_for(store, hash);
    pthread_mutex_lock(&shard->lock);
    maintain(shard);
    return shard;
}

static struct shard *lock_shard(struct store *store, const char *key, size_t klen, uint64_t *hash)
{
    *hash = hash_key(store, key, klen);
    return lock_hashed(store, *hash);
}

enum store_result store_get(struct store *store, const char *key, size_t klen, int64_t now_ms,
                            store_value_fn fn, void *ctx)
{
    uint64_t hash;
    struct shard *shard = lock_shard(store, key, klen, &hash);
    struct table *owner;
    struct entry **link = find_live(shard, hash, key, klen, now_ms, &owner);
    enum store_result result = STORE_NOT_FOUND;
    if (link != NULL)
        result = fn(ctx, (*link)->bytes + klen, (*link)->vlen) ? STORE_OK : STORE_NO_MEMORY;
    pthread_mutex_unlock(&shard->lock);
    return result;
}

static struct entry *entry_new(uint64_t hash, const char *key, size_t klen, const char *value,
                               size_t vlen, int64_t expire_at_ms)
{
    struct entry *e = malloc(sizeof *e + klen + vlen);
    if (e == NULL)
        return NULL;
    e->next = NULL;
    e->hash = hash;
    e->expire_at_ms = expire_at_ms;
    e->klen = klen;
    e->vlen = vlen;
    memcpy(e->bytes, key, klen);
    if (vlen)
        memcpy(e->bytes + klen, value, vlen);
    return e;
}

static void account(struct shard *shard, const struct entry *e)
{
    shard->bytes += entry_size(e);
    if (e->expire_at_ms)
        shard->expires++;
}

/* Adds an entry for a new key: to the target table while a resize is under way. */
static bool insert_new(struct shard *shard, struct entry *fresh)
{
    struct table *t = rehashing(shard) ? &shard->tables[1] : &shard->tables[0];
    if (t->buckets == NULL)
        return false;
    struct entry **link = &t->buckets[fresh->hash & (t->size - 1)];
    fresh->next = *link;
    *link = fresh;
    t->used++;
    account(shard, fresh);
    return true;
}

static void replace(struct shard *shard, struct entry **link, struct entry *fresh)
{
    struct entry *old = *link;
    fresh->next = old->next;
    *link = fresh;
    entry_free(shard, old);
    account(shard, fresh);
}

enum store_result store_set(struct store *store, const char *key, size_t klen, const char *value,
                            size_t vlen, int64_t expire_at_ms, enum store_set_mode mode,
                            int64_t now_ms)
{
    /* The entry is built before the lock is taken: the copy of a large value happens outside. */
    uint64_t hash = hash_key(store, key, klen);
    struct entry *fresh = entry_new(hash, key, klen, value, vlen, expire_at_ms);
    if (fresh == NULL)
        return STORE_NO_MEMORY;
    struct shard *shard = lock_hashed(store, hash);
    struct table *owner;
    struct entry **link = find_live(shard, hash, key, klen, now_ms, &owner);
    enum store_result result = STORE_OK;
    if (mode == STORE_SET_IF_ABSENT && link != NULL)
        result = STORE_EXISTS;
    else if (mode == STORE_SET_IF_PRESENT && link == NULL)
        result = STORE_NOT_FOUND;
    else if (link != NULL)
        replace(shard, link, fresh);
    else if (!insert_new(shard, fresh))
        result = STORE_NO_MEMORY;
    if (result == STORE_OK)
        fresh = NULL;
    pthread_mutex_unlock(&shard->lock);
    free(fresh);
    return result;
}

bool store_delete(struct store *store, const char *key, size_t klen, int64_t now_ms)
{
    uint64_t hash;
    struct shard *shard = lock_shard(store, key, klen, &hash);
    struct table *owner;
    struct entry **link = find_live(shard, hash, key, klen, now_ms, &owner);
#if RINGKV_REGRESSION_LEAK
    /* A planted regression (server/CMakeLists.txt, RINGKV_REGRESSION=leak): on the DEL path the
     * entry is unlinked and never freed, so the allocation gate's live-at-exit rule breaks at
     * store_set's allocation. */
    if (link != NULL) {
        struct entry *e = *link;
        *link = e->next;
        owner->used--;
        shard->bytes -= entry_size(e);
    }
#else
    if (link != NULL)
        unlink_entry(shard, owner, link);
#endif
    pthread_mutex_unlock(&shard->lock);
    return link != NULL;
}

bool store_exists(struct store *store, const char *key, size_t klen, int64_t now_ms)
{
    uint64_t hash = hash_key(store, key, klen);
    struct shard *shard = shard_for(store, hash);
    pthread_mutex_lock(&shard->lock);
    struct table *owner;
    bool found = find_live(shard, hash, key, klen, now_ms, &owner) != NULL;
    pthread_mutex_unlock(&shard->lock);
    return found;
}

/* Redis's rule: the whole value is a decimal int64, no sign but '-', no spaces, no leading
 * zeros, no "-0". */
static bool parse_int64(const char *s, size_t len, int64_t *out)
{
    char buf[24];
    size_t i = len > 0 && s[0] == '-';
    if (len == i || len >= sizeof buf || (s[i] == '0' && (len - i > 1 || i == 1)))
        return false;
    for (size_t k = i; k < len; k++)
        if (s[k] < '0' || s[k] > '9')
            return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno != 0)
        return false;
    *out = v;
    return true;
}

enum store_result store_incr(struct store *store, const char *key, size_t klen, int64_t delta,
                             int64_t now_ms, int64_t *result)
{
    uint64_t hash;
    struct shard *shard = lock_shard(store, key, klen, &hash);
    struct table *owner;
    struct entry **link = find_live(shard, hash, key, klen, now_ms, &owner);
    int64_t current = 0, expire_at = link ? (*link)->expire_at_ms : 0;
    enum store_result status = STORE_OK;
    if (link != NULL && !parse_int64((*link)->bytes + klen, (*link)->vlen, &current))
        status = STORE_NOT_INTEGER;
    else if (__builtin_add_overflow(current, delta, result))
        status = STORE_OVERFLOW;
    if (status == STORE_OK) {
        char digits[24];
        int n = snprintf(digits, sizeof digits, "%" PRId64, *result);
        struct entry *fresh = entry_new(hash, key, klen, digits, (size_t)n, expire_at);
        if (fresh == NULL)
            status = STORE_NO_MEMORY;
        else if (link != NULL)
            replace(shard, link, fresh);
        else if (!insert_new(shard, fresh))
            status = STORE_NO_MEMORY, free(fresh);
    }
    pthread_mutex_unlock(&shard->lock);
    return status;
}

void store_flush(struct store *store)
{
    for (size_t i = 0; i < SHARD_COUNT; i++) {
        struct shard *shard = &store->shards[i];
        pthread_mutex_lock(&shard->lock);
        shard_clear(shard);
        pthread_mutex_unlock(&shard->lock);
    }
}

void store_stats(struct store *store, struct store_stats *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < SHARD_COUNT; i++) {
        struct shard *shard = &store->shards[i];
        pthread_mutex_lock(&shard->lock);
        out->keys += shard->tables[0].used + shard->tables[1].used;
        out->expires += shard->expires;
        out->bytes += shard->bytes;
        out->rehashing_shards += rehashing(shard);
        pthread_mutex_unlock(&shard->lock);
    }
}
