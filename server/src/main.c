/* ringkv: a small Redis-protocol key-value server whose connections embed the receive queue
 * under audit. Options, listeners, worker threads and an orderly shutdown on SIGINT/SIGTERM. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server.h"

static const char usage[] =
    "usage: ringkv [--bind ADDR] [--port N] [--threads N] [--io uring|epoll] [--buffers N]\n"
    "              [--buffer-size B] [--maxclients N] [--hash-seed N]\n"
    "  --bind ADDR        IPv4 address to listen on (default 127.0.0.1)\n"
    "  --port N           TCP port, 0 for any free one (default 6390); the bound port is printed\n"
    "  --threads N        worker threads, each with its own listener (default: one per CPU)\n"
    "  --io uring|epoll   I/O model (default: io_uring when the kernel allows it, else epoll)\n"
    "  --buffers N        receive buffers per worker, a power of two up to 32768 (default 1024)\n"
    "  --buffer-size B    bytes per receive buffer, 512 to 1048576 (default 4096)\n"
    "  --maxclients N     connections accepted at once over all workers (default 10000)\n"
    "  --hash-seed N      the store's hash seed, 0 to 18446744073709551615, so that runs place\n"
    "                     keys alike and allocate alike (default: a random one per process)\n";

/* Parses a whole decimal in [min, max], or exits 2 naming the option (strtoull would take
 * "-1" for its largest value). */
static uint64_t parse_number(const char *option, const char *text, uint64_t min, uint64_t max)
{
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || end == text || strchr(text, '-') != NULL || value < min ||
        value > max) {
        fprintf(stderr, "ringkv: %s wants a number from %llu to %llu, got '%s'\n", option,
                (unsigned long long)min, (unsigned long long)max, text);
        exit(2);
    }
    return value;
}

static struct server_config parse_options(int argc, char **argv)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct server_config cfg = {.bind = "127.0.0.1",
                                .port = 6390,
                                .threads = cpus > 0 ? (unsigned)cpus : 1,
                                .buffers = 1024,
                                .buffer_size = 4096,
                                .maxclients = 10000};
    static const struct option options[] = {{"bind", required_argument, NULL, 'b'},
                                            {"port", required_argument, NULL, 'p'},
                                            {"threads", required_argument, NULL, 't'},
                                            {"io", required_argument, NULL, 'i'},
                                            {"buffers", required_argument, NULL, 'n'},
                                            {"buffer-size", required_argument, NULL, 's'},
                                            {"maxclients", required_argument, NULL, 'm'},
                                            {"hash-seed", required_argument, NULL, 'S'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (opt) {
        case 'b':
            cfg.bind = optarg;
            break;
        case 'p':
            cfg.port = (int)parse_number("--port", optarg, 0, 65535);
            break;
        case 't':
            cfg.threads = (unsigned)parse_number("--threads", optarg, 1, 256);
            break;
        case 'i':
            if (strcmp(optarg, "uring") != 0 && strcmp(optarg, "epoll") != 0) {
                fprintf(stderr, "ringkv: --io wants uring or epoll, got '%s'\n", optarg);
                exit(2);
            }
            cfg.io = optarg;
            break;
        case 'n':
            cfg.buffers = (unsigned)parse_number("--buffers", optarg, 1, 32768);
            if (cfg.buffers & (cfg.buffers - 1)) {
                fprintf(stderr, "ringkv: --buffers wants a power of two, got %u\n", cfg.buffers);
                exit(2);
            }
            break;
        case 's':
            cfg.buffer_size = (unsigned)parse_number("--buffer-size", optarg, 512, 1 << 20);
            break;
        case 'm':
            cfg.maxclients = (unsigned)parse_number("--maxclients", optarg, 1, 1000000);
            break;
        case 'S':
            cfg.hash_seed = parse_number("--hash-seed", optarg, 0, UINT64_MAX);
            cfg.hash_seed_given = true;
            break;
        case 'h':
            fputs(usage, stdout);
            exit(0);
        default:
            fputs(usage, stderr);
            exit(2);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ringkv: unexpected argument '%s'\n%s", argv[optind], usage);
        exit(2);
    }
    return cfg;
}

/* A listener on the configured address; every worker has its own, sharing the port. */
static int open_listener(const struct server_config *cfg, int port)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, cfg->bind, &addr.sin_addr) != 1) {
        fprintf(stderr, "ringkv: --bind wants an IPv4 address, got '%s'\n", cfg->bind);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 4096) < 0) {
        fprintf(stderr, "ringkv: cannot listen on %s:%d: %s\n", cfg->bind, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int bound_port(int fd)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof addr;
    getsockname(fd, (struct sockaddr *)&addr, &len);
    return ntohs(addr.sin_port);
}

static bool worker_init(struct server *s, struct worker *w, unsigned index)
{
    w->server = s;
    w->index = index;
    w->listen_fd = open_listener(&s->config, s->port);
    if (w->listen_fd < 0)
        return false;
    if (s->port == 0)
        s->port = bound_port(w->listen_fd);
    w->wake_fd = eventfd(0, EFD_CLOEXEC);
    size_t bytes = (size_t)s->config.buffers * s->config.buffer_size;
    w->buffers = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (w->wake_fd < 0 || w->buffers == MAP_FAILED) {
        w->buffers = NULL;
        fprintf(stderr, "ringkv: worker %u: %s\n", index, strerror(errno));
        return false;
    }
    return s->backend->start(w);
}

static void worker_fini(struct worker *w)
{
    if (w->server == NULL)
        return;
    w->server->backend->stop(w);
    if (w->buffers)
        munmap(w->buffers, (size_t)w->server->config.buffers * w->server->config.buffer_size);
    if (w->listen_fd >= 0)
        close(w->listen_fd);
    if (w->wake_fd >= 0)
        close(w->wake_fd);
    resp_args_free(&w->args);
    out_free(&w->out);
    free(w->closing);
    free(w->starved);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->server->backend->run(w);
    return NULL;
}

static const struct backend_ops *choose_backend(const char *io)
{
    if (io != NULL && strcmp(io, "epoll") == 0)
        return &epoll_backend;
    if (uring_available())
        return &uring_backend;
    if (io != NULL) {
        fprintf(stderr, "ringkv: --io uring: io_uring is not available on this kernel\n");
        exit(2);
    }
    return &epoll_backend;
}

int main(int argc, char **argv)
{
    struct server s = {.config = parse_options(argc, argv)};
    s.backend = choose_backend(s.config.io);
    s.port = s.config.port;
    s.started_ms = now_ms();
    s.store = s.config.hash_seed_given ? store_create_seeded(s.config.hash_seed) : store_create();
    s.workers = calloc(s.config.threads, sizeof *s.workers);
    if (s.store == NULL || s.workers == NULL) {
        fprintf(stderr, "ringkv: out of memory\n");
        return 1;
    }
    /* Only the main thread takes SIGINT/SIGTERM; workers inherit the blocked mask. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    int status = 0;
    unsigned started = 0;
    pthread_t *threads = calloc(s.config.threads, sizeof *threads);
    for (unsigned i = 0; i < s.config.threads; i++) {
        s.workers[i].listen_fd = s.workers[i].wake_fd = -1;
        if (threads == NULL || !worker_init(&s, &s.workers[i], i)) {
            status = 1;
            break;
        }
    }
    if (status == 0) {
        printf("ringkv: listening on %s:%d (io=%s, threads=%u, queue=%s, connection=%zu B)\n",
               s.config.bind, s.port, s.backend->name, s.config.threads, QUEUE_VARIANT_NAME,
               sizeof(struct connection));
        fflush(stdout);
        for (; started < s.config.threads; started++)
            if (pthread_create(&threads[started], NULL, worker_main, &s.workers[started]) != 0)
                break;
        int signo = 0;
        if (started == s.config.threads)
            sigwait(&stop_signals, &signo);
        else
            status = 1;
        atomic_store(&s.stopping, true);
        for (unsigned i = 0; i < started; i++) {
            uint64_t one = 1;
            (void)!write(s.workers[i].wake_fd, &one, sizeof one);
        }
        for (unsigned i = 0; i < started; i++)
            pthread_join(threads[i], NULL);
    }
    for (unsigned i = 0; i < s.config.threads; i++)
        worker_fini(&s.workers[i]);
    free(threads);
    free(s.workers);
    store_destroy(s.store);
    if (status == 0)
        printf("ringkv: shut down\n");
    return status;
}
