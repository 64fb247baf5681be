/* What serve's files share: the processes followed (targets.c), a scrape of one of them
 * (scrape.c), and the responses built from them (exposition.c, pprof_endpoint.c, http.c).
 * Context tags say which locks a function expects held. */
#ifndef SERVE_SRC_INTERNAL_H
#define SERVE_SRC_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "serve/serve.h"

/* Connections counted by their queue's peak depth, as a Prometheus histogram: le 1, 2, 4 ... 64
 * and +Inf. */
#define SERVE_DEPTH_BUCKETS 8

/* One dump's figures, as /metrics shows them (read from the dump, never from the process). */
struct figures {
    uint64_t allocs, frees, bytes, live_bytes, live_blocks, peak_live_bytes;
    bool exact;       /* the report's counts are exact (its trust), else partial */
    bool queue_audit; /* queue hooks seen or queue code named: the queue series exist */
    uint64_t pushes, depth_one_allocs;
    uint64_t depth_buckets[SERVE_DEPTH_BUCKETS]; /* cumulative; the last is +Inf: every one */
    uint64_t depth_sum;                          /* sum over connections of their peak depth */
    int depth_one_check;                         /* 1 pass, 0 fail, -1 n/a or absent */
};

/* A process carrying the preload, known by its pid and its image's start (an exec, or a pid
 * reused, is another target). */
struct target {
    pid_t pid;
    uint64_t start_ns;
    void *handle; /* serve_control_ops.open's */
    char exe[PATH_MAX], build_id[96], run_id[48];
    unsigned refs; /* requests using it: freed when gone and 0 (table lock) */
    bool gone;
    pthread_mutex_t lock; /* held while its figures or its dump are refreshed or read */
    /* Under lock: */
    uint64_t outstanding, before; /* a request not served yet, and dumps_written before it */
    long long read_ns;            /* when the figures were read, 0: never */
    bool has;
    struct figures fig, shown; /* shown: what /metrics gave last (counters never go back) */
    char dump[PATH_MAX];       /* the last dump read, in the state directory, or "" */
    char error[400];           /* why the last refresh failed, or "" */
    unsigned poll_ms;          /* how often its writer reads requests, as its record says */
    /* Its dump thread, when a request waits for one that has not started (scrape.c): */
    long long writer_retry_ns; /* when it may next be started, 0: now */
    bool writer_refused;       /* a start was refused: never tried again for this image */
    char writer_why[200];      /* why the last start did not start it, or "" */
};

struct server {
    struct serve_options options;
    const struct serve_control_ops *ops;
    char state_dir[PATH_MAX];
    bool own_state_dir; /* made by serve: removed at exit */
    char token[256];
    size_t token_length; /* 0: no token asked */
    pthread_mutex_t table_lock;
    struct target **targets;
    size_t target_count;
    long long scanned_ns;
    uint64_t sequence;            /* for request tokens and delta dumps' names (table lock) */
    _Atomic unsigned delta_waits; /* delta profiles waiting now */
    _Atomic bool stopping;        /* SIGINT or SIGTERM came: waits end */
};

/* ---- monotonic.c ---- */
long long serve_now_ns(void); /* CLOCK_MONOTONIC */

/* ---- targets.c ---- */
/* Finds the processes carrying the preload now (at most once per 200 ms): new ones added, gone
 * or replaced ones dropped. context: table lock not held. */
void targets_scan(struct server *s);
/* The targets now, each with a reference taken (release with targets_release); count in *n.
 * NULL with *n 0 when there are none or memory ran out. context: table lock not held. */
struct target **targets_take(struct server *s, size_t *n);
/* The target of pid with a reference, or NULL (rescanned first). */
struct target *targets_find(struct server *s, pid_t pid);
void targets_release(struct server *s, struct target **list, size_t n);
void targets_free_all(struct server *s);

/* ---- scrape.c ---- */
/* t locked and its figures fresh: a dump asked for and read unless the last was read at
 * fresh_from_ns or later, waiting until deadline_ns at most. True with t->lock held (t->dump
 * stays the caller's until it unlocks); false, unlocked, with one line in error (another scrape
 * held t that long, or no dump in time: the request stays pending and its dump is taken at the
 * next scrape). */
bool scrape_fresh(struct server *s, struct target *t, long long deadline_ns,
                  long long fresh_from_ns, char *error, size_t size);
/* The fresh_from_ns of an ordinary scrape: figures younger than --min-interval are served. */
long long scrape_fresh_from(const struct server *s);
/* Every target of list refreshed at once (each one's request sent, then all waited for together
 * until deadline_ns): ok[i] whether list[i]'s figures are fresh, locked[i] whether its lock is
 * held (the caller unlocks it once it has read them; one already held on entry is not taken). */
void scrape_all(struct server *s, struct target *const *list, bool *ok, bool *locked, size_t n,
                long long deadline_ns);

/* ---- exposition.c ---- */
/* The /metrics body (Prometheus text 0.0.4, or OpenMetrics 1.0 when openmetrics) for targets
 * (those refreshed have ok[i]); malloc'd, its length in *length, NULL when memory ran out.
 * context: each target's lock held. */
char *exposition_render(struct target *const *targets, const bool *ok, size_t n, bool openmetrics,
                        size_t *length);

/* ---- pprof_endpoint.c ---- */
/* A gzipped profile.proto (allocs: alloc_space its default sample type, as Go's
 * /debug/pprof/allocs; else inuse_space, as /heap) of the dump at later, or of what changed
 * since the dump at earlier when it is not NULL (a delta): malloc'd, NULL with a line in
 * error. */
char *pprof_render(const char *earlier, const char *later, bool allocs, size_t *length, char *error,
                   size_t size);

/* ---- delta_profile.c ---- */
/* Longest ?seconds= served, and delta profiles waiting at once (each holds a connection of
 * http.c's MAX_CONNECTIONS: /metrics keeps the rest). */
#define SERVE_DELTA_MAX_S 300
#define SERVE_DELTA_WAITS 16
/* GET /debug/pprof/heap|allocs?pid=N&seconds=S for t (a reference held, its lock not): a dump
 * now (by deadline_ns), another S seconds after it, the profile of what changed between them in
 * *body (malloc'd). The HTTP status: 200; 404 when the process ended meanwhile; 503 (a dump
 * that did not come, too many deltas waiting, serve stopping) or 500 with one line in error. */
unsigned delta_profile(struct server *s, struct target *t, bool allocs, unsigned seconds,
                       long long deadline_ns, char **body, size_t *length, char *error,
                       size_t size);

/* ---- http.c ---- */
struct MHD_Daemon;
struct sockaddr;
/* The HTTP daemon started on address (its threads serve s), or NULL. */
struct MHD_Daemon *serve_http_start(struct server *s, const struct sockaddr *address, bool ipv6);
unsigned serve_http_port(struct MHD_Daemon *d); /* the port bound */

#endif
