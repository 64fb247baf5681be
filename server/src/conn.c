/* Connection logic shared by the io_uring and epoll backends: every received buffer is pushed on
 * the connection's queue, commands are parsed from its front, fully consumed buffers are popped
 * and handed back, replies go out directly or wait in the connection when the socket is full. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"

/* Replies are sent once this much has accumulated, so a long pipeline cannot grow them without
 * bound before anything goes out. */
#define FLUSH_THRESHOLD (64 * 1024)

static bool vector_push(struct connection ***items, size_t *len, size_t *cap, struct connection *c)
{
    if (*len == *cap) {
        size_t grown = *cap ? *cap * 2 : 16;
        struct connection **more = realloc(*items, grown * sizeof *more);
        if (more == NULL)
            return false;
        *items = more;
        *cap = grown;
    }
    (*items)[(*len)++] = c;
    return true;
}

static void vector_remove(struct connection **items, size_t *len, struct connection *c)
{
    for (size_t i = 0; i < *len; i++) {
        if (items[i] == c) {
            items[i] = items[--*len];
            return;
        }
    }
}

/* Over --maxclients (or shutting down): tell the client why, close, count it. */
bool conn_refuse_if_full(struct worker *w, int fd)
{
    struct server *s = w->server;
    uint64_t open = 0;
    for (unsigned i = 0; i < s->config.threads; i++)
        open += atomic_load_explicit(&s->workers[i].stats.connections, memory_order_relaxed);
    if (open < s->config.maxclients && !atomic_load(&s->stopping))
        return false;
    static const char full[] = "-ERR max number of clients reached\r\n";
    (void)!send(fd, full, sizeof full - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    close(fd);
    atomic_fetch_add_explicit(&w->stats.rejected, 1, memory_order_relaxed);
    return true;
}

struct connection *conn_open(struct worker *w, int fd)
{
    struct connection *c = malloc(sizeof *c);
    if (c == NULL)
        return NULL;
    memset(c, 0, offsetof(struct connection, queue));
    c->fd = fd;
    c->worker = w;
    c->id = atomic_fetch_add(&w->server->next_connection_id, 1) + 1;
    resp_scan_reset(&c->scan);
    /* Announce the connection before the queue exists, so that whatever its init allocates
     * (the deque variant's map and first chunk) is attributed to it. */
    qaudit_conn_open(c, &c->queue);
    rxq_init(&c->queue);
    c->pending = NULL;
    c->pending_len = c->pending_sent = 0;
    c->opened_ms = now_ms();
    c->name_len = 0;
    c->reserved = 0;
    c->prev = NULL;
    c->next = w->connections;
    if (w->connections)
        w->connections->prev = c;
    w->connections = c;
    atomic_fetch_add_explicit(&w->stats.connections, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->stats.connections_total, 1, memory_order_relaxed);
    return c;
}

/* Keeps INFO's queues-on-heap count in step with the queue after a push or pop. */
static void track_heap(struct connection *c)
{
    bool on_heap = rxq_on_heap(&c->queue);
    if (on_heap == ((c->flags & CONN_ON_HEAP) != 0))
        return;
    c->flags ^= CONN_ON_HEAP;
    if (on_heap)
        atomic_fetch_add_explicit(&c->worker->stats.queues_on_heap, 1, memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&c->worker->stats.queues_on_heap, 1, memory_order_relaxed);
}

static void give_back(struct connection *c, uint16_t buffer_id)
{
    atomic_fetch_sub_explicit(&c->worker->stats.buffers_held, 1, memory_order_relaxed);
    c->worker->server->backend->return_buffer(c->worker, buffer_id);
}

/* Pops the front buffer (its id read first, its offset never written) and returns it. */
static void pop_front_buffer(struct connection *c)
{
    uint16_t id = rxq_front(&c->queue)->buffer_id;
    rxq_pop(&c->queue, NULL);
    track_heap(c);
    give_back(c, id);
}

/* The parser's view of the connection: the spill buffer when there is one, else the queue. */
static bool source_segment(void *source, size_t index, struct resp_segment *out)
{
    struct connection *c = source;
    if (c->spill != NULL) {
        if (index > 0)
            return false;
        *out = (struct resp_segment){c->spill, c->spill_len};
        return true;
    }
    struct rx_desc *d = rxq_at(&c->queue, index);
    if (d == NULL)
        return false;
    *out = (struct resp_segment){worker_buffer(c->worker, d->buffer_id) + d->offset,
                                 d->length - d->offset};
    return true;
}

/* Drops the first length bytes of the current command from the source. */
static void consume(struct connection *c, size_t length)
{
    if (c->spill != NULL) {
        memmove(c->spill, c->spill + length, c->spill_len - length);
        c->spill_len -= length;
        if (c->spill_len == 0 && rxq_size(&c->queue) == 0) {
            free(c->spill);
            c->spill = NULL;
            c->spill_cap = 0;
        }
        return;
    }
    while (length > 0) {
        struct rx_desc *front = rxq_front(&c->queue);
        size_t available = front->length - front->offset;
        if (length < available) {
            front->offset += (uint32_t)length;
            return;
        }
        length -= available;
        pop_front_buffer(c);
    }
}

static bool spill_append(struct connection *c, const char *bytes, size_t len)
{
    if (c->spill_cap - c->spill_len < len) {
        size_t cap = c->spill_cap ? c->spill_cap : RESP_SPILL_BULK;
        while (cap - c->spill_len < len)
            cap *= 2;
        char *grown = realloc(c->spill, cap);
        if (grown == NULL)
            return false;
        c->spill = grown;
        c->spill_cap = cap;
    }
    memcpy(c->spill + c->spill_len, bytes, len);
    c->spill_len += len;
    return true;
}

/* Moves every queued byte into the spill buffer, handing the buffers back. */
static bool spill_drain_queue(struct connection *c)
{
    while (rxq_size(&c->queue) > 0) {
        struct rx_desc *d = rxq_front(&c->queue);
        if (!spill_append(c, worker_buffer(c->worker, d->buffer_id) + d->offset,
                          d->length - d->offset))
            return false;
        pop_front_buffer(c);
    }
    return true;
}

/* A bulk too large for receive buffers follows: from here on the request gathers in a spill
 * buffer. The scan position keeps its meaning as an offset into the spilled bytes. */
static bool spill_start(struct connection *c)
{
    size_t scanned = resp_scan_length(&c->scan, source_segment, c);
    if (!spill_drain_queue(c))
        return false;
    c->scan.seg = 0;
    c->scan.off = (uint32_t)scanned;
    return true;
}

static void send_error_and_close(struct connection *c, const char *message)
{
    struct outbuf *out = &c->worker->out;
    reply_error(out, message);
    if (!out->failed)
        (void)!send(c->fd, out->data, out->len, MSG_DONTWAIT | MSG_NOSIGNAL);
    out->len = 0;
    out->failed = false;
    conn_close(c);
}

/* Sends the worker's reply buffer; what the socket does not take is kept in the connection. */
static void flush_replies(struct connection *c)
{
    struct outbuf *out = &c->worker->out;
    if (out->failed) {
        out->len = 0;
        out->failed = false;
        conn_close(c);
        return;
    }
    if (out->len == 0)
        return;
    ssize_t sent = send(c->fd, out->data, out->len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        out->len = 0;
        conn_close(c);
        return;
    }
    size_t done = sent > 0 ? (size_t)sent : 0;
    if (done < out->len) {
        c->pending = malloc(out->len - done);
        if (c->pending == NULL) {
            out->len = 0;
            conn_close(c);
            return;
        }
        memcpy(c->pending, out->data + done, out->len - done);
        c->pending_len = out->len - done;
        c->pending_sent = 0;
        c->worker->server->backend->want_writable(c);
    }
    out->len = 0;
    /* Do not let one large reply pin a large scratch buffer for the worker's life. */
    if (out->cap > 4 * FLUSH_THRESHOLD) {
        out_free(out);
    }
}

/* Parses and executes every complete command at the front, then sends the replies. Stops while
 * replies are pending: the input then waits in the queue, which is the backpressure. */
static void process(struct connection *c)
{
    struct worker *w = c->worker;
    while (!(c->flags & (CONN_CLOSING | CONN_CLOSE_AFTER)) && c->pending_len == 0) {
        if (c->spill != NULL && !spill_drain_queue(c)) {
            send_error_and_close(c, "ERR out of memory");
            return;
        }
        const char *error = NULL;
        enum resp_status status = resp_scan(&c->scan, source_segment, c, &error);
        if (status == RESP_INCOMPLETE)
            break;
        if (status == RESP_ERROR) {
            char message[128];
            snprintf(message, sizeof message, "ERR %s", error);
            flush_replies(c);
            send_error_and_close(c, message);
            return;
        }
        if (status == RESP_SPILL) {
            if (!spill_start(c)) {
                send_error_and_close(c, "ERR out of memory");
                return;
            }
            continue;
        }
        size_t length = resp_scan_length(&c->scan, source_segment, c);
        if (!resp_extract(source_segment, c, length, &w->args)) {
            send_error_and_close(c, "ERR out of memory");
            return;
        }
        if (w->args.argc > 0) {
            command_execute(c, &w->args, &w->out);
            c->commands++;
            atomic_fetch_add_explicit(&w->stats.commands, 1, memory_order_relaxed);
        }
        consume(c, length);
        resp_scan_reset(&c->scan);
        if (w->out.len >= FLUSH_THRESHOLD)
            flush_replies(c);
    }
    flush_replies(c);
    if ((c->flags & CONN_CLOSE_AFTER) && c->pending_len == 0)
        conn_close(c);
}

void conn_received(struct connection *c, uint16_t buffer_id, uint32_t length)
{
    atomic_fetch_add_explicit(&c->worker->stats.buffers_held, 1, memory_order_relaxed);
    if (c->flags & CONN_CLOSING) {
        give_back(c, buffer_id);
        return;
    }
    struct rx_desc d = {.buffer_id = buffer_id, .length = length, .offset = 0};
    if (!rxq_push(&c->queue, &d)) {
        give_back(c, buffer_id);
        send_error_and_close(c, "ERR out of memory");
        return;
    }
    track_heap(c);
    uint32_t depth = (uint32_t)rxq_size(&c->queue);
    if (depth > c->peak_depth) {
        c->peak_depth = depth;
        uint64_t peak =
            atomic_load_explicit(&c->worker->stats.peak_queue_depth, memory_order_relaxed);
        while (depth > peak && !atomic_compare_exchange_weak_explicit(
                                   &c->worker->stats.peak_queue_depth, &peak, depth,
                                   memory_order_relaxed, memory_order_relaxed))
            ;
    }
    process(c);
}

void conn_writable(struct connection *c)
{
    if (c->flags & CONN_CLOSING)
        return;
    while (c->pending_sent < c->pending_len) {
        ssize_t sent = send(c->fd, c->pending + c->pending_sent, c->pending_len - c->pending_sent,
                            MSG_DONTWAIT | MSG_NOSIGNAL);
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->worker->server->backend->want_writable(c);
            return;
        }
        if (sent <= 0) {
            conn_close(c);
            return;
        }
        c->pending_sent += (size_t)sent;
    }
    free(c->pending);
    c->pending = NULL;
    c->pending_len = c->pending_sent = 0;
    process(c);
}

void conn_close(struct connection *c)
{
    if (c->flags & CONN_CLOSING)
        return;
    c->flags |= CONN_CLOSING;
    struct worker *w = c->worker;
    if (c->flags & CONN_STARVED) {
        vector_remove(w->starved, &w->starved_len, c);
        c->flags &= ~CONN_STARVED;
    }
    shutdown(c->fd, SHUT_RDWR);
    if (!vector_push(&w->closing, &w->closing_len, &w->closing_cap, c)) {
        /* Cannot even remember it: leave it in the list; conn_close_all frees it at exit. */
        fprintf(stderr, "ringkv: out of memory closing connection %llu\n",
                (unsigned long long)c->id);
    }
    w->server->backend->begin_close(c);
}

/* Returns every buffer, then clears the queue once: closing neither allocates nor shrinks. */
static void release(struct connection *c)
{
    struct worker *w = c->worker;
    for (size_t i = 0; i < rxq_size(&c->queue); i++)
        give_back(c, rxq_at(&c->queue, i)->buffer_id);
    rxq_clear(&c->queue);
    qaudit_conn_close(c, &c->queue);
    if (c->flags & CONN_ON_HEAP)
        atomic_fetch_sub_explicit(&w->stats.queues_on_heap, 1, memory_order_relaxed);
    rxq_destroy(&c->queue);
    close(c->fd);
    free(c->spill);
    free(c->pending);
    free(c->name);
    if (c->prev)
        c->prev->next = c->next;
    else
        w->connections = c->next;
    if (c->next)
        c->next->prev = c->prev;
    atomic_fetch_sub_explicit(&w->stats.connections, 1, memory_order_relaxed);
    free(c);
}

void conn_reap(struct worker *w)
{
    for (size_t i = 0; i < w->closing_len;) {
        struct connection *c = w->closing[i];
        if (c->inflight > 0) {
            i++;
            continue;
        }
        w->closing[i] = w->closing[--w->closing_len];
        release(c);
    }
}

void conn_close_all(struct worker *w)
{
    for (struct connection *c = w->connections; c != NULL; c = c->next)
        conn_close(c);
}

bool conn_starve(struct connection *c)
{
    struct worker *w = c->worker;
    if (c->flags & CONN_STARVED)
        return true;
    if (!vector_push(&w->starved, &w->starved_len, &w->starved_cap, c))
        return false;
    c->flags |= CONN_STARVED;
    atomic_fetch_add_explicit(&w->stats.enobufs, 1, memory_order_relaxed);
    return true;
}

size_t conn_take_starved(struct worker *w, struct connection **out, size_t max)
{
    size_t n = 0;
    while (n < max && w->starved_len > 0) {
        struct connection *c = w->starved[--w->starved_len];
        c->flags &= ~CONN_STARVED;
        out[n++] = c;
    }
    return n;
}
