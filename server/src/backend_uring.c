/* The io_uring backend: per worker one ring, a provided-buffer ring, a multishot accept on the
 * worker's SO_REUSEPORT listener, and one multishot receive with buffer select per connection.
 * Completions carry the connection pointer with the operation in its low bits. */
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"

#define RING_ENTRIES 4096
#define BUFFER_GROUP 0

enum op { OP_RECV = 1, OP_WRITABLE = 2 };
enum tag { TAG_ACCEPT = 1, TAG_WAKE = 2, TAG_IGNORE = 3 };

struct uring {
    struct io_uring ring;
    struct io_uring_buf_ring *buf_ring;
    size_t buf_ring_bytes;
    unsigned free_buffers;
    uint64_t wake_value;
};

static struct uring *uring_of(struct worker *w)
{
    return w->backend;
}

/* An SQE, submitting what is queued when the submission ring is full. */
static struct io_uring_sqe *get_sqe(struct uring *u)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    while (sqe == NULL) {
        io_uring_submit(&u->ring);
        sqe = io_uring_get_sqe(&u->ring);
    }
    return sqe;
}

static uint64_t conn_tag(struct connection *c, enum op op)
{
    return (uint64_t)(uintptr_t)c | op;
}

static void arm_accept(struct worker *w)
{
    struct io_uring_sqe *sqe = get_sqe(uring_of(w));
    io_uring_prep_multishot_accept(sqe, w->listen_fd, NULL, NULL, 0);
    io_uring_sqe_set_data64(sqe, TAG_ACCEPT);
}

static void arm_wake(struct worker *w)
{
    struct uring *u = uring_of(w);
    struct io_uring_sqe *sqe = get_sqe(u);
    io_uring_prep_read(sqe, w->wake_fd, &u->wake_value, sizeof u->wake_value, 0);
    io_uring_sqe_set_data64(sqe, TAG_WAKE);
}

static void arm_recv(struct connection *c)
{
    struct io_uring_sqe *sqe = get_sqe(uring_of(c->worker));
    io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BUFFER_GROUP;
    io_uring_sqe_set_data64(sqe, conn_tag(c, OP_RECV));
    c->flags |= CONN_RECV_ARMED;
    c->inflight++;
}

static bool uring_start(struct worker *w)
{
    struct uring *u = calloc(1, sizeof *u);
    if (u == NULL)
        return false;
    w->backend = u;
    /* Not SINGLE_ISSUER: the ring is built on the main thread and driven by the worker. */
    struct io_uring_params params = {.flags = IORING_SETUP_COOP_TASKRUN};
    int err = io_uring_queue_init_params(RING_ENTRIES, &u->ring, &params);
    if (err < 0) {
        params.flags = 0;
        err = io_uring_queue_init_params(RING_ENTRIES, &u->ring, &params);
    }
    if (err < 0) {
        fprintf(stderr, "ringkv: io_uring_queue_init: %s\n", strerror(-err));
        free(u);
        w->backend = NULL;
        return false;
    }
    unsigned count = w->server->config.buffers;
    u->buf_ring_bytes = count * sizeof(struct io_uring_buf);
    u->buf_ring =
        mmap(NULL, u->buf_ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    struct io_uring_buf_reg reg = {
        .ring_addr = (uint64_t)(uintptr_t)u->buf_ring, .ring_entries = count, .bgid = BUFFER_GROUP};
    if (u->buf_ring == MAP_FAILED || (err = io_uring_register_buf_ring(&u->ring, &reg, 0)) < 0) {
        fprintf(stderr, "ringkv: cannot register the provided-buffer ring: %s\n",
                strerror(u->buf_ring == MAP_FAILED ? errno : -err));
        io_uring_queue_exit(&u->ring);
        free(u);
        w->backend = NULL;
        return false;
    }
    io_uring_buf_ring_init(u->buf_ring);
    for (unsigned id = 0; id < count; id++)
        io_uring_buf_ring_add(u->buf_ring, worker_buffer(w, (uint16_t)id),
                              w->server->config.buffer_size, (unsigned short)id,
                              io_uring_buf_ring_mask(count), (int)id);
    io_uring_buf_ring_advance(u->buf_ring, (int)count);
    u->free_buffers = count;
    arm_accept(w);
    arm_wake(w);
    return true;
}

static void uring_return_buffer(struct worker *w, uint16_t id)
{
    struct uring *u = uring_of(w);
    io_uring_buf_ring_add(u->buf_ring, worker_buffer(w, id), w->server->config.buffer_size, id,
                          io_uring_buf_ring_mask(w->server->config.buffers), 0);
    io_uring_buf_ring_advance(u->buf_ring, 1);
    u->free_buffers++;
}

static void uring_want_writable(struct connection *c)
{
    if (c->flags & CONN_WRITE_ARMED)
        return;
    struct io_uring_sqe *sqe = get_sqe(uring_of(c->worker));
    io_uring_prep_poll_add(sqe, c->fd, POLLOUT);
    io_uring_sqe_set_data64(sqe, conn_tag(c, OP_WRITABLE));
    c->flags |= CONN_WRITE_ARMED;
    c->inflight++;
}

static void cancel(struct connection *c, enum op op)
{
    struct io_uring_sqe *sqe = get_sqe(uring_of(c->worker));
    io_uring_prep_cancel64(sqe, conn_tag(c, op), 0);
    io_uring_sqe_set_data64(sqe, TAG_IGNORE);
}

static void uring_begin_close(struct connection *c)
{
    if (c->flags & CONN_RECV_ARMED)
        cancel(c, OP_RECV);
    if (c->flags & CONN_WRITE_ARMED)
        cancel(c, OP_WRITABLE);
}

static void on_accept(struct worker *w, struct io_uring_cqe *cqe)
{
    if (!(cqe->flags & IORING_CQE_F_MORE) && !atomic_load(&w->server->stopping))
        arm_accept(w);
    if (cqe->res < 0)
        return;
    int fd = cqe->res;
    if (conn_refuse_if_full(w, fd))
        return;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct connection *c = conn_open(w, fd);
    if (c == NULL) {
        close(fd);
        return;
    }
    arm_recv(c);
}

static void on_recv(struct connection *c, struct io_uring_cqe *cqe)
{
    struct uring *u = uring_of(c->worker);
    if (!(cqe->flags & IORING_CQE_F_MORE)) {
        c->flags &= ~CONN_RECV_ARMED;
        c->inflight--;
    }
    if (cqe->res > 0 && (cqe->flags & IORING_CQE_F_BUFFER)) {
        u->free_buffers--;
        conn_received(c, (uint16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT), (uint32_t)cqe->res);
        /* A multishot receive can end without an error (e.g. completion ring overflow). */
        if (!(c->flags & (CONN_RECV_ARMED | CONN_CLOSING)))
            arm_recv(c);
    } else if (cqe->res == -ENOBUFS) {
        /* Transient: the receive is re-armed when buffers come back. */
        if (!(c->flags & CONN_CLOSING) && !conn_starve(c))
            conn_close(c);
    } else if (cqe->res != -ECANCELED || !(c->flags & CONN_CLOSING)) {
        conn_close(c); /* end of stream, reset, or an unexpected cancel */
    }
}

static void on_writable(struct connection *c)
{
    c->flags &= ~CONN_WRITE_ARMED;
    c->inflight--;
    conn_writable(c);
}

/* Re-arms the receives of connections that met ENOBUFS, as many as there are free buffers
 * (at most a batch per loop turn, so the re-armed receives take buffers before more wake). */
static void resume_starved(struct worker *w)
{
    struct uring *u = uring_of(w);
    struct connection *batch[64];
    size_t want = u->free_buffers < 64 ? u->free_buffers : 64;
    size_t n = conn_take_starved(w, batch, want);
    for (size_t i = 0; i < n; i++)
        if (!(batch[i]->flags & (CONN_CLOSING | CONN_RECV_ARMED)))
            arm_recv(batch[i]);
}

static void dispatch(struct worker *w, struct io_uring_cqe *cqe)
{
    uint64_t data = io_uring_cqe_get_data64(cqe);
    switch (data) {
    case TAG_ACCEPT:
        on_accept(w, cqe);
        return;
    case TAG_WAKE:
        if (atomic_load(&w->server->stopping))
            conn_close_all(w);
        else
            arm_wake(w);
        return;
    case TAG_IGNORE:
        return;
    }
    struct connection *c = (struct connection *)(uintptr_t)(data & ~(uint64_t)7);
    if ((data & 7) == OP_RECV)
        on_recv(c, cqe);
    else
        on_writable(c);
}

static void uring_run(struct worker *w)
{
    struct uring *u = uring_of(w);
    while (!(atomic_load(&w->server->stopping) && w->connections == NULL)) {
        int err = io_uring_submit_and_wait(&u->ring, 1);
        if (err < 0 && err != -EINTR && err != -EAGAIN && err != -EBUSY) {
            fprintf(stderr, "ringkv: io_uring_submit_and_wait: %s\n", strerror(-err));
            break;
        }
        unsigned head, seen = 0;
        struct io_uring_cqe *cqe;
        io_uring_for_each_cqe(&u->ring, head, cqe)
        {
            dispatch(w, cqe);
            seen++;
        }
        io_uring_cq_advance(&u->ring, seen);
        resume_starved(w);
        conn_reap(w);
    }
}

static void uring_stop(struct worker *w)
{
    struct uring *u = uring_of(w);
    if (u == NULL)
        return;
    io_uring_unregister_buf_ring(&u->ring, BUFFER_GROUP);
    io_uring_queue_exit(&u->ring);
    munmap(u->buf_ring, u->buf_ring_bytes);
    free(u);
    w->backend = NULL;
}

bool uring_available(void)
{
    struct io_uring ring;
    if (io_uring_queue_init(2, &ring, 0) < 0)
        return false;
    struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);
    bool ok = probe && io_uring_opcode_supported(probe, IORING_OP_RECV) &&
              io_uring_opcode_supported(probe, IORING_OP_PROVIDE_BUFFERS);
    io_uring_free_probe(probe);
    io_uring_queue_exit(&ring);
    return ok;
}

const struct backend_ops uring_backend = {
    .name = "uring",
    .start = uring_start,
    .run = uring_run,
    .stop = uring_stop,
    .return_buffer = uring_return_buffer,
    .want_writable = uring_want_writable,
    .begin_close = uring_begin_close,
};
