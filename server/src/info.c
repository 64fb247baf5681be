/* INFO: server, clients, memory, stats, keyspace and queues sections, from every worker's
 * counters (relaxed atomics: INFO is a snapshot, not a barrier). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "server.h"

struct totals {
    uint64_t connections, connections_total, commands, rejected, peak_depth, on_heap, held, enobufs;
};

static void sum_workers(struct server *s, struct totals *t)
{
    memset(t, 0, sizeof *t);
    for (unsigned i = 0; i < s->config.threads; i++) {
        struct worker_stats *w = &s->workers[i].stats;
        t->connections += atomic_load_explicit(&w->connections, memory_order_relaxed);
        t->connections_total += atomic_load_explicit(&w->connections_total, memory_order_relaxed);
        t->commands += atomic_load_explicit(&w->commands, memory_order_relaxed);
        t->rejected += atomic_load_explicit(&w->rejected, memory_order_relaxed);
        t->on_heap += atomic_load_explicit(&w->queues_on_heap, memory_order_relaxed);
        t->held += atomic_load_explicit(&w->buffers_held, memory_order_relaxed);
        t->enobufs += atomic_load_explicit(&w->enobufs, memory_order_relaxed);
        uint64_t peak = atomic_load_explicit(&w->peak_queue_depth, memory_order_relaxed);
        if (peak > t->peak_depth)
            t->peak_depth = peak;
    }
}

static void add(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    if (*len >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len += (size_t)n;
}

static bool wanted(const struct resp_arg *section, const char *name)
{
    if (section == NULL || (section->len == 3 && strncasecmp(section->ptr, "all", 3) == 0) ||
        (section->len == 7 && strncasecmp(section->ptr, "default", 7) == 0))
        return true;
    return section->len == strlen(name) && strncasecmp(section->ptr, name, section->len) == 0;
}

void info_write(struct connection *c, const struct resp_arg *section, struct outbuf *out)
{
    struct server *s = c->worker->server;
    struct totals t;
    sum_workers(s, &t);
    struct store_stats st;
    store_stats(s->store, &st);
    char buf[4096];
    size_t len = 0;
    if (wanted(section, "server"))
        add(buf, sizeof buf, &len,
            "# Server\r\nredis_version:7.0.0\r\nringkv_version:0.1.0\r\nqueue_variant:%s\r\n"
            "io:%s\r\nprocess_id:%d\r\ntcp_port:%d\r\nio_threads:%u\r\nuptime_in_seconds:%" PRId64
            "\r\n\r\n",
            QUEUE_VARIANT_NAME, s->backend->name, (int)getpid(), s->port, s->config.threads,
            (now_ms() - s->started_ms) / 1000);
    if (wanted(section, "clients"))
        add(buf, sizeof buf, &len,
            "# Clients\r\nconnected_clients:%" PRIu64 "\r\nmaxclients:%u\r\n\r\n", t.connections,
            s->config.maxclients);
    if (wanted(section, "memory"))
        add(buf, sizeof buf, &len,
            "# Memory\r\nused_memory_dataset:%" PRIu64 "\r\nconnection_struct_bytes:%zu\r\n"
            "receive_buffers:%u\r\nreceive_buffer_size:%u\r\nreceive_buffers_held:%" PRIu64
            "\r\n\r\n",
            st.bytes, sizeof(struct connection), s->config.buffers, s->config.buffer_size, t.held);
    if (wanted(section, "stats"))
        add(buf, sizeof buf, &len,
            "# Stats\r\ntotal_connections_received:%" PRIu64 "\r\ntotal_commands_processed:%" PRIu64
            "\r\nrejected_connections:%" PRIu64 "\r\nreceive_buffer_shortages:%" PRIu64 "\r\n\r\n",
            t.connections_total, t.commands, t.rejected, t.enobufs);
    if (wanted(section, "keyspace") && st.keys > 0)
        add(buf, sizeof buf, &len, "# Keyspace\r\ndb0:keys=%" PRIu64 ",expires=%" PRIu64 "\r\n\r\n",
            st.keys, st.expires);
    if (wanted(section, "queues"))
        add(buf, sizeof buf, &len,
            "# Queues\r\nqueue_connections:%" PRIu64 "\r\npeak_queue_depth:%" PRIu64
            "\r\nqueues_on_heap:%" PRIu64 "\r\nqueue_object_bytes:%zu\r\n\r\n",
            t.connections, t.peak_depth, t.on_heap, sizeof(struct rxq));
    reply_bulk(out, buf, len < sizeof buf ? len : sizeof buf - 1);
}
