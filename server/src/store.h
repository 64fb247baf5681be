/* The key space: a hash table of binary-safe keys and values, shared by all workers. It is split
 * into shards, each behind its own mutex and resized incrementally, so neither a lock nor a
 * resize ever stops more than one shard for more than one bucket's worth of work. */
#ifndef RINGKV_STORE_H
#define RINGKV_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;

enum store_result {
    STORE_OK,
    STORE_NOT_FOUND,   /* GET/DEL/INCR on a missing key; SET XX on a missing key */
    STORE_EXISTS,      /* SET NX on an existing key */
    STORE_NOT_INTEGER, /* INCR on a value that is not a 64-bit integer */
    STORE_OVERFLOW,    /* INCR past INT64_MAX/MIN */
    STORE_NO_MEMORY,
};

enum store_set_mode { STORE_SET_ALWAYS, STORE_SET_IF_ABSENT, STORE_SET_IF_PRESENT };

/* Called with the value while its shard is locked: copy what you need, do not call the store. */
typedef bool (*store_value_fn)(void *ctx, const char *value, size_t len);

/* A store whose keys hash with a random seed (a client cannot choose keys that collide). */
struct store *store_create(void);
/* A store whose keys hash with seed: the same keys reach the same shards and buckets in every
 * run, so a run's allocations repeat (ringkv --hash-seed, for the allocation gate's tests). */
struct store *store_create_seeded(uint64_t seed);
void store_destroy(struct store *store);

/* now_ms is the caller's clock (CLOCK_REALTIME in ms); expire_at_ms 0 means never. */
enum store_result store_get(struct store *store, const char *key, size_t klen, int64_t now_ms,
                            store_value_fn fn, void *ctx);
enum store_result store_set(struct store *store, const char *key, size_t klen, const char *value,
                            size_t vlen, int64_t expire_at_ms, enum store_set_mode mode,
                            int64_t now_ms);
bool store_delete(struct store *store, const char *key, size_t klen, int64_t now_ms);
bool store_exists(struct store *store, const char *key, size_t klen, int64_t now_ms);
enum store_result store_incr(struct store *store, const char *key, size_t klen, int64_t delta,
                             int64_t now_ms, int64_t *result);
void store_flush(struct store *store);

struct store_stats {
    uint64_t keys, expires, bytes;
    uint64_t rehashing_shards;
};
void store_stats(struct store *store, struct store_stats *out);

#endif
