/* serve_run: the daemon's settings made ready (the address to bind, the token, its own state
 * directory), the HTTP side started, and everything undone at SIGINT or SIGTERM: the dumps of
 * scrapes removed with the state directory serve made. Loopback unless --listen says otherwise,
 * and beyond loopback only with a token (as exporters that are safe to leave running do). */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* "HOST:PORT" or "[V6]:PORT", numeric, into address: true, or false after one line. */
static bool parse_listen(const char *listen, struct sockaddr_storage *address, bool *ipv6,
                         bool *loopback)
{
    char host[128];
    const char *colon = strrchr(listen, ':');
    size_t length = colon ? (size_t)(colon - listen) : 0;
    if (colon == NULL || length == 0 || length >= sizeof host || colon[1] == '\0') {
        fprintf(stderr, "qaudit serve: --listen %s: expected HOST:PORT (127.0.0.1:9464)\n", listen);
        return false;
    }
    memcpy(host, listen, length);
    host[length] = '\0';
    if (host[0] == '[' && length > 2 && host[length - 1] == ']') {
        memmove(host, host + 1, length - 2);
        host[length - 2] = '\0';
    }
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
                             .ai_socktype = SOCK_STREAM};
    struct addrinfo *found = NULL;
    int err = getaddrinfo(host, colon + 1, &hints, &found);
    if (err != 0) {
        fprintf(stderr, "qaudit serve: --listen %s: %s (a numeric address and port)\n", listen,
                gai_strerror(err));
        return false;
    }
    memcpy(address, found->ai_addr, found->ai_addrlen);
    *ipv6 = found->ai_family == AF_INET6;
    freeaddrinfo(found);
    if (*ipv6)
        *loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)address)->sin6_addr);
    else
        *loopback = (ntohl(((struct sockaddr_in *)address)->sin_addr.s_addr) >> 24) == 127;
    return true;
}

/* The token: the file's first line, without its line end; refused when empty, or when others
 * than its owner may read the file. */
static bool read_token(const char *path, struct server *s)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (f == NULL || fstat(fileno(f), &st) != 0) {
        fprintf(stderr, "qaudit serve: --token-file %s: %s\n", path, strerror(errno));
        if (f != NULL)
            fclose(f);
        return false;
    }
    bool read = fgets(s->token, sizeof s->token, f) != NULL;
    fclose(f);
    s->token_length = read ? strcspn(s->token, "\r\n") : 0;
    s->token[s->token_length] = '\0';
    if (s->token_length == 0) {
        fprintf(stderr, "qaudit serve: --token-file %s: its first line is empty\n", path);
        return false;
    }
    if ((st.st_mode & 077) != 0) {
        fprintf(stderr,
                "qaudit serve: --token-file %s: others than its owner may read it (chmod 600)\n",
                path);
        return false;
    }
    return true;
}

static bool make_state_dir(struct server *s)
{
    if (s->options.state_dir != NULL) {
        snprintf(s->state_dir, sizeof s->state_dir, "%s", s->options.state_dir);
        if (mkdir(s->state_dir, 0700) != 0 && errno != EEXIST) {
            fprintf(stderr, "qaudit serve: --state-dir %s: %s\n", s->state_dir, strerror(errno));
            return false;
        }
        return true;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(s->state_dir, sizeof s->state_dir, "%s/qaudit-serve-XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(s->state_dir) == NULL) {
        fprintf(stderr, "qaudit serve: cannot make a directory in %s: %s\n",
                tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
        return false;
    }
    s->own_state_dir = true;
    return true;
}

static bool prepare(struct server *s, struct sockaddr_storage *address, bool *ipv6)
{
    bool loopback = false;
    if (!parse_listen(s->options.listen, address, ipv6, &loopback))
        return false;
    if (s->options.token_file != NULL && !read_token(s->options.token_file, s))
        return false;
    if (!loopback && s->token_length == 0) {
        fprintf(stderr,
                "qaudit serve: --listen %s is beyond loopback: give --token-file (the bearer "
                "token scrapers send)\n",
                s->options.listen);
        return false;
    }
    return make_state_dir(s);
}

int serve_run(const struct serve_options *options, const struct serve_control_ops *ops)
{
    static struct server s; /* its threads' for the daemon's life */
    s.options = *options;
    s.ops = ops;
    pthread_mutex_init(&s.table_lock, NULL);
    s.targets = calloc((size_t)options->max_targets, sizeof *s.targets);
    struct sockaddr_storage address;
    bool ipv6 = false;
    if (s.targets == NULL || !prepare(&s, &address, &ipv6))
        return 2;
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* the daemon's threads inherit it */
    struct MHD_Daemon *d = serve_http_start(&s, (struct sockaddr *)&address, ipv6);
    if (d == NULL) {
        fprintf(stderr, "qaudit serve: cannot listen on %s\n", options->listen);
        if (s.own_state_dir)
            rmdir(s.state_dir);
        return 2;
    }
    char host[128];
    snprintf(host, sizeof host, "%.*s", (int)(strrchr(options->listen, ':') - options->listen),
             options->listen);
    printf("qaudit serve: listening on %s:%u (state in %s)\n", host, serve_http_port(d),
           s.state_dir);
    fflush(stdout);
    sigdelset(&stop, SIGPIPE);
    int signal_number = 0;
    sigwait(&stop, &signal_number);
    atomic_store(&s.stopping, true); /* delta profiles' waits end: their threads are joined */
    MHD_stop_daemon(d);
    targets_free_all(&s);
    if (s.own_state_dir)
        rmdir(s.state_dir);
    free(s.targets);
    return 0;
}
