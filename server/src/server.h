/* ringkv's shared types: the connection that embeds the receive queue, the per-thread worker
 * and the backend interface both I/O models implement. */
#ifndef RINGKV_SERVER_H
#define RINGKV_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/rxq.h"
#include "reply.h"
#include "resp.h"
#include "store.h"

enum conn_flags {
    CONN_CLOSING = 1u << 0,     /* being torn down: no more input is processed */
    CONN_CLOSE_AFTER = 1u << 1, /* QUIT: close once the reply is sent */
    CONN_RECV_ARMED = 1u << 2,  /* io_uring: the multishot receive is live */
    CONN_STARVED = 1u << 3,     /* waits for free receive buffers */
    CONN_WRITE_ARMED = 1u << 4, /* waits for the socket to become writable */
    CONN_ON_HEAP = 1u << 5,     /* its queue is on the heap (for INFO) */
};

/* Receive-control state first (one cache line), the queue at offset 96, reply state after it.
 * With the inline queue this is 184 bytes: one allocation in the 192-byte class. */
struct connection {
    int fd;
    uint32_t flags;
    struct resp_scan scan;
    struct worker *worker;
    uint64_t id;
    uint32_t inflight; /* io_uring requests whose last completion has not arrived */
    uint32_t peak_depth;
    uint64_t commands;
    /* A request with a bulk of RESP_SPILL_BULK or more is gathered here instead of in buffers. */
    char *spill;
    size_t spill_len;
    size_t spill_cap;
    char *name; /* CLIENT SETNAME */
    struct rxq queue;
    char *pending; /* reply bytes the socket did not take yet */
    size_t pending_len;
    size_t pending_sent;
    struct connection *prev, *next;
    int64_t opened_ms;
    uint32_t name_len;
    uint32_t reserved;
};

_Static_assert(offsetof(struct connection, queue) == 96, "the queue sits at offset 96");
_Static_assert(offsetof(struct connection, worker) < 64, "receive control in the first line");
#if QUEUE_VARIANT == QUEUE_VARIANT_INLINE
_Static_assert(sizeof(struct connection) == 184, "inline: 184 B, inside the 192 B class");
#elif QUEUE_VARIANT == QUEUE_VARIANT_RING
_Static_assert(sizeof(struct connection) == 176, "ring variant: 176 B");
#else
_Static_assert(sizeof(struct connection) == 232, "deque variant: 232 B");
#endif

struct worker;

/* What an I/O model provides to the shared connection logic. */
struct backend_ops {
    const char *name;
    bool (*start)(struct worker *w); /* set up; false with a message on stderr */
    void (*run)(struct worker *w);   /* event loop until w->server->stopping and drained */
    void (*stop)(struct worker *w);  /* tear down what start built */
    void (*return_buffer)(struct worker *w, uint16_t buffer_id);
    void (*want_writable)(struct connection *c);
    void (*begin_close)(struct connection *c); /* release happens once no request is in flight */
};

struct worker_stats {
    _Atomic uint64_t connections; /* open now */
    _Atomic uint64_t connections_total;
    _Atomic uint64_t commands;
    _Atomic uint64_t rejected;
    _Atomic uint64_t peak_queue_depth;
    _Atomic uint64_t queues_on_heap; /* open connections whose queue is on the heap now */
    _Atomic uint64_t buffers_held;   /* receive buffers in connection queues now */
    _Atomic uint64_t enobufs;
};

struct server_config {
    const char *bind;
    int port;
    unsigned threads;
    const char *io; /* "uring", "epoll" or NULL for automatic */
    unsigned buffers;
    unsigned buffer_size;
    unsigned maxclients;
    bool hash_seed_given; /* --hash-seed: the store's keys hash with hash_seed, not a random one */
    uint64_t hash_seed;
};

struct server {
    struct server_config config;
    const struct backend_ops *backend;
    struct store *store;
    struct worker *workers;
    int port; /* the bound port (config.port may be 0) */
    atomic_bool stopping;
    int64_t started_ms;
    _Atomic uint64_t next_connection_id;
};

struct worker {
    struct server *server;
    unsigned index;
    int listen_fd;
    int wake_fd;   /* eventfd written at shutdown */
    char *buffers; /* buffers * buffer_size bytes */
    struct resp_args args;
    struct outbuf out;
    struct connection *connections;
    struct connection **closing; /* closed, waiting for their last completion */
    size_t closing_len, closing_cap;
    struct connection **starved;
    size_t starved_len, starved_cap;
    void *backend;
    struct worker_stats stats;
};

static inline char *worker_buffer(struct worker *w, uint16_t id)
{
    return w->buffers + (size_t)id * w->server->config.buffer_size;
}

/* conn.c: the connection logic shared by both backends. */
bool conn_refuse_if_full(struct worker *w, int fd);
struct connection *conn_open(struct worker *w, int fd);
void conn_received(struct connection *c, uint16_t buffer_id, uint32_t length);
void conn_writable(struct connection *c);
void conn_close(struct connection *c);
/* Frees connections that are closed and have nothing in flight; call between events. */
void conn_reap(struct worker *w);
void conn_close_all(struct worker *w);
bool conn_starve(struct connection *c);
/* Removes and returns the starved connections, for the backend to resume reading them. */
size_t conn_take_starved(struct worker *w, struct connection **out, size_t max);

/* commands.c */
void command_execute(struct connection *c, const struct resp_args *args, struct outbuf *out);

/* info.c: INFO [section] */
void info_write(struct connection *c, const struct resp_arg *section, struct outbuf *out);

/* clock.c: wall-clock milliseconds */
int64_t now_ms(void);

extern const struct backend_ops uring_backend;
extern const struct backend_ops epoll_backend;
bool uring_available(void);

#endif
