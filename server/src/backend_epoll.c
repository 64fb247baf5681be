/* The epoll backend: the same queue discipline as io_uring, over a pool of buffers of the same
 * geometry handed out from a free list. Edge-triggered: a connection is read until EAGAIN, or
 * until the pool runs dry, in which case it waits on the starved list for buffers to come back. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"

#define MAX_EVENTS 256

struct epoll_state {
    int epfd;
    uint16_t *free_ids;
    unsigned free_count;
};

static struct epoll_state *state_of(struct worker *w)
{
    return w->backend;
}

static bool watch(struct worker *w, int fd, uint32_t events, void *ptr, int op)
{
    struct epoll_event ev = {.events = events, .data.ptr = ptr};
    return epoll_ctl(state_of(w)->epfd, op, fd, &ev) == 0;
}

static bool epoll_start(struct worker *w)
{
    struct epoll_state *e = calloc(1, sizeof *e);
    unsigned count = w->server->config.buffers;
    if (e == NULL || (e->free_ids = malloc(count * sizeof *e->free_ids)) == NULL) {
        free(e);
        return false;
    }
    w->backend = e;
    for (unsigned i = 0; i < count; i++)
        e->free_ids[i] = (uint16_t)(count - 1 - i);
    e->free_count = count;
    e->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (e->epfd < 0 || !watch(w, w->listen_fd, EPOLLIN, &w->listen_fd, EPOLL_CTL_ADD) ||
        !watch(w, w->wake_fd, EPOLLIN, &w->wake_fd, EPOLL_CTL_ADD)) {
        fprintf(stderr, "ringkv: epoll setup: %s\n", strerror(errno));
        return false;
    }
    return true;
}

static void epoll_return_buffer(struct worker *w, uint16_t id)
{
    struct epoll_state *e = state_of(w);
    e->free_ids[e->free_count++] = id;
}

static void epoll_want_writable(struct connection *c)
{
    if (c->flags & CONN_WRITE_ARMED)
        return;
    c->flags |= CONN_WRITE_ARMED;
    watch(c->worker, c->fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, c, EPOLL_CTL_MOD);
}

static void epoll_begin_close(struct connection *c)
{
    epoll_ctl(state_of(c->worker)->epfd, EPOLL_CTL_DEL, c->fd, NULL);
}

/* Reads into free pool buffers until the socket is drained, the peer is gone or the pool is
 * empty; each filled buffer goes on the connection's queue. */
static void read_socket(struct connection *c)
{
    struct worker *w = c->worker;
    struct epoll_state *e = state_of(w);
    while (!(c->flags & CONN_CLOSING)) {
        if (e->free_count == 0) {
            if (!conn_starve(c))
                conn_close(c);
            return;
        }
        uint16_t id = e->free_ids[--e->free_count];
        ssize_t n = recv(c->fd, worker_buffer(w, id), w->server->config.buffer_size, 0);
        if (n > 0) {
            conn_received(c, id, (uint32_t)n);
            continue;
        }
        e->free_ids[e->free_count++] = id;
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            conn_close(c);
        return;
    }
}

static void accept_all(struct worker *w)
{
    for (;;) {
        int fd = accept4(w->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (conn_refuse_if_full(w, fd))
            continue;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct connection *c = conn_open(w, fd);
        if (c == NULL) {
            close(fd);
            continue;
        }
        if (!watch(w, fd, EPOLLIN | EPOLLRDHUP | EPOLLET, c, EPOLL_CTL_ADD)) {
            conn_close(c);
            continue;
        }
        read_socket(c);
    }
}

static void on_connection_event(struct connection *c, uint32_t events)
{
    if (c->flags & CONN_CLOSING)
        return;
    if ((events & EPOLLOUT) && (c->flags & CONN_WRITE_ARMED)) {
        c->flags &= ~CONN_WRITE_ARMED;
        watch(c->worker, c->fd, EPOLLIN | EPOLLRDHUP | EPOLLET, c, EPOLL_CTL_MOD);
        conn_writable(c);
    }
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        read_socket(c);
}

static void resume_starved(struct worker *w)
{
    struct epoll_state *e = state_of(w);
    struct connection *batch[64];
    while (e->free_count > 0 && w->starved_len > 0) {
        size_t n = conn_take_starved(w, batch, 64);
        for (size_t i = 0; i < n; i++)
            read_socket(batch[i]);
    }
}

static void epoll_run(struct worker *w)
{
    struct epoll_state *e = state_of(w);
    struct epoll_event events[MAX_EVENTS];
    while (!(atomic_load(&w->server->stopping) && w->connections == NULL)) {
        int n = epoll_wait(e->epfd, events, MAX_EVENTS, -1);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "ringkv: epoll_wait: %s\n", strerror(errno));
            break;
        }
        for (int i = 0; i < n; i++) {
            void *ptr = events[i].data.ptr;
            if (ptr == &w->listen_fd) {
                accept_all(w);
            } else if (ptr == &w->wake_fd) {
                uint64_t value;
                (void)!read(w->wake_fd, &value, sizeof value);
                if (atomic_load(&w->server->stopping))
                    conn_close_all(w);
            } else {
                on_connection_event(ptr, events[i].events);
            }
        }
        resume_starved(w);
        conn_reap(w);
    }
}

static void epoll_stop(struct worker *w)
{
    struct epoll_state *e = state_of(w);
    if (e == NULL)
        return;
    if (e->epfd >= 0)
        close(e->epfd);
    free(e->free_ids);
    free(e);
    w->backend = NULL;
}

const struct backend_ops epoll_backend = {
    .name = "epoll",
    .start = epoll_start,
    .run = epoll_run,
    .stop = epoll_stop,
    .return_buffer = epoll_return_buffer,
    .want_writable = epoll_want_writable,
    .begin_close = epoll_begin_close,
};
