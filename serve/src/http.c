/* The HTTP side of qaudit serve, on libmicrohttpd (Debian's libmicrohttpd-dev): a thread per
 * connection (concurrent scrapes; a slow target holds only its own scrapes), at most
 * MAX_CONNECTIONS at once and MHD's own limit on a request's head (a huge query gets 431
 * before any of this runs), so that memory stays bounded. Routes, authorization (a bearer token
 * compared in constant time) and every refusal as a status and one line. */
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_CONNECTIONS 64
#define MAX_PID 4194304 /* the kernel's pid_max ceiling */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, char *body, size_t length,
                               const char *type)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(length, body, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"qaudit\"");
    if (strcmp(type, "application/octet-stream") == 0)
        MHD_add_response_header(r, "Content-Disposition", "attachment; filename=\"profile\"");
    enum MHD_Result result = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return result;
}

/* A refusal: the status and one line. */
static enum MHD_Result line(struct MHD_Connection *c, unsigned status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static enum MHD_Result line(struct MHD_Connection *c, unsigned status, const char *format, ...)
{
    char *body = NULL;
    va_list ap;
    va_start(ap, format);
    int n = vasprintf(&body, format, ap);
    va_end(ap);
    if (n < 0)
        return MHD_NO;
    return respond(c, status, body, (size_t)n, "text/plain; charset=utf-8");
}

/* Whether the request carries "Authorization: Bearer TOKEN": every byte compared whatever
 * differs first, so the time taken says nothing of the token. */
static bool authorized(const struct server *s, struct MHD_Connection *c)
{
    if (s->token_length == 0)
        return true;
    const char *given = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (given == NULL || strncmp(given, "Bearer ", 7) != 0)
        return false;
    given += 7;
    size_t length = strlen(given);
    unsigned char differ = length != s->token_length;
    for (size_t i = 0; i < s->token_length; i++)
        differ |= (unsigned char)s->token[i] ^ (unsigned char)(i < length ? given[i] : 0);
    return differ == 0;
}

/* The scrape's deadline: --timeout, or less when Prometheus says its own is shorter
 * (X-Prometheus-Scrape-Timeout-Seconds), keeping a tenth of it for the answer. */
static long long deadline_of(const struct server *s, struct MHD_Connection *c)
{
    double seconds = s->options.timeout_s;
    const char *header =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Prometheus-Scrape-Timeout-Seconds");
    char *end = NULL;
    double theirs = header ? strtod(header, &end) : 0;
    if (header != NULL && end != header && theirs > 0 && theirs * 0.9 < seconds)
        seconds = theirs * 0.9;
    return serve_now_ns() + (long long)(seconds * 1e9);
}

static bool wants_openmetrics(struct MHD_Connection *c)
{
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
    return accept != NULL && strstr(accept, "application/openmetrics-text") != NULL;
}

static enum MHD_Result metrics(struct server *s, struct MHD_Connection *c)
{
    size_t n = 0;
    struct target **list = targets_take(s, &n);
    bool *ok = calloc(n + 1, sizeof *ok);
    bool *locked = calloc(n + 1, sizeof *locked);
    if (list == NULL || ok == NULL || locked == NULL) {
        free(ok);
        free(locked);
        free(list);
        return line(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n");
    }
    scrape_all(s, list, ok, locked, n, deadline_of(s, c));
    bool openmetrics = wants_openmetrics(c);
    size_t length = 0;
    char *body = exposition_render(list, ok, n, openmetrics, &length);
    for (size_t i = 0; i < n; i++)
        if (locked[i])
            pthread_mutex_unlock(&list[i]->lock);
    targets_release(s, list, n);
    free(list);
    free(ok);
    free(locked);
    if (body == NULL)
        return line(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n");
    return respond(c, MHD_HTTP_OK, body, length,
                   openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                               : "text/plain; version=0.0.4; charset=utf-8");
}

/* http_sd (and file_sd, saved) targets: one per process, its labels, and __param_pid so that a
 * pprof scraper's target asks for that process. */
static enum MHD_Result targets(struct server *s, struct MHD_Connection *c)
{
    size_t n = 0;
    struct target **list = targets_take(s, &n);
    const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    json_t *all = json_array();
    for (size_t i = 0; list != NULL && i < n; i++) {
        const struct target *t = list[i];
        char pid[16];
        snprintf(pid, sizeof pid, "%d", (int)t->pid);
        json_t *labels = json_pack("{ssssssssss}", "pid", pid, "exe", t->exe, "build_id",
                                   t->build_id, "run_id", t->run_id, "__param_pid", pid);
        json_array_append_new(all, json_pack("{s[s]so}", "targets", host ? host : s->options.listen,
                                             "labels", labels));
    }
    targets_release(s, list, n);
    free(list);
    char *body = json_dumps(all, JSON_INDENT(1));
    json_decref(all);
    if (body == NULL)
        return line(c, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory\n");
    size_t length = strlen(body);
    body[length] = '\n'; /* json_dumps' terminator, replaced: the body is counted by length */
    return respond(c, MHD_HTTP_OK, body, length + 1, "application/json");
}

/* ?pid=N: a positive decimal of at most 7 digits, or 0. */
static pid_t pid_argument(const char *text)
{
    if (text == NULL || text[0] == '\0' || strlen(text) > 7)
        return 0;
    long pid = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        pid = pid * 10 + (*p - '0');
    }
    return pid > 0 && pid <= MAX_PID ? (pid_t)pid : 0;
}

/* ?seconds=S: a whole number from 1 to SERVE_DELTA_MAX_S, or 0. */
static unsigned seconds_argument(const char *text)
{
    unsigned seconds = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9' || p - text >= 4)
            return 0;
        seconds = seconds * 10 + (unsigned)(*p - '0');
    }
    return seconds <= SERVE_DELTA_MAX_S ? seconds : 0;
}

/* The profile of t now: its last dump, refreshed as a scrape refreshes it. */
static unsigned whole_profile(struct server *s, struct target *t, bool allocs, long long deadline,
                              char **body, size_t *length, char *error, size_t size)
{
    if (!scrape_fresh(s, t, deadline, scrape_fresh_from(s), error, size))
        return MHD_HTTP_SERVICE_UNAVAILABLE;
    *body = pprof_render(NULL, t->dump, allocs, length, error, size);
    pthread_mutex_unlock(&t->lock);
    return *body != NULL ? MHD_HTTP_OK : MHD_HTTP_INTERNAL_SERVER_ERROR;
}

static enum MHD_Result profile(struct server *s, struct MHD_Connection *c, bool allocs)
{
    const char *text = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
    pid_t pid = pid_argument(text);
    if (text == NULL)
        return line(c, MHD_HTTP_BAD_REQUEST,
                    "which process: add ?pid=N (GET /targets lists them)\n");
    if (pid == 0)
        return line(c, MHD_HTTP_BAD_REQUEST, "pid=%.20s%s is not a process id\n", text,
                    strlen(text) > 20 ? "..." : "");
    const char *seconds_text = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
    unsigned seconds = seconds_text ? seconds_argument(seconds_text) : 0;
    if (seconds_text != NULL && seconds == 0)
        return line(c, MHD_HTTP_BAD_REQUEST,
                    "seconds=%.20s%s: a delta's length is a whole number of seconds from 1 to "
                    "%d\n",
                    seconds_text, strlen(seconds_text) > 20 ? "..." : "", SERVE_DELTA_MAX_S);
    struct target *t = targets_find(s, pid);
    if (t == NULL)
        return line(c, MHD_HTTP_NOT_FOUND,
                    "no process %d with libqaudit-preload.so that this qaudit serve may read\n",
                    (int)pid);
    long long deadline = deadline_of(s, c);
    char error[512] = "";
    char *body = NULL;
    size_t length = 0;
    unsigned status =
        seconds
            ? delta_profile(s, t, allocs, seconds, deadline, &body, &length, error, sizeof error)
            : whole_profile(s, t, allocs, deadline, &body, &length, error, sizeof error);
    targets_release(s, &t, 1);
    if (body == NULL)
        return line(c, status, "%s\n", error);
    return respond(c, MHD_HTTP_OK, body, length, "application/octet-stream");
}

static const char index_text[] =
    "qaudit serve: the allocation counts of the processes carrying libqaudit-preload.so\n"
    "GET /metrics                   Prometheus exposition (OpenMetrics when asked)\n"
    "GET /targets                   the processes, as http_sd targets with their labels\n"
    "GET /debug/pprof/heap?pid=N    gzipped profile.proto, inuse_space by default\n"
    "GET /debug/pprof/allocs?pid=N  the same, alloc_space by default\n"
    "    &seconds=S                 what changed over the next S seconds (a delta)\n";

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    (void)version, (void)upload;
    struct server *s = cls;
    static int first_call;
    if (*state == NULL) { /* the head only: answered once the request is whole */
        *state = &first_call;
        return MHD_YES;
    }
    if (*upload_size != 0)
        return line(c, MHD_HTTP_CONTENT_TOO_LARGE, "requests have no body here\n");
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return line(c, MHD_HTTP_METHOD_NOT_ALLOWED, "%.16s: only GET and HEAD are served\n",
                    method);
    if (!authorized(s, c))
        return line(c, MHD_HTTP_UNAUTHORIZED,
                    "a bearer token is needed (Authorization: Bearer, the --token-file's)\n");
    if (strcmp(url, "/metrics") == 0)
        return metrics(s, c);
    if (strcmp(url, "/targets") == 0)
        return targets(s, c);
    if (strcmp(url, "/debug/pprof/heap") == 0)
        return profile(s, c, false);
    if (strcmp(url, "/debug/pprof/allocs") == 0)
        return profile(s, c, true);
    if (strcmp(url, "/") == 0)
        return respond(c, MHD_HTTP_OK, strdup(index_text), sizeof index_text - 1,
                       "text/plain; charset=utf-8");
    return line(c, MHD_HTTP_NOT_FOUND,
                "%.64s%s: no such page (/metrics, /targets, /debug/pprof/heap)\n", url,
                strlen(url) > 64 ? "..." : "");
}

struct MHD_Daemon *serve_http_start(struct server *s, const struct sockaddr *address, bool ipv6)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_POLL | MHD_USE_ERROR_LOG | (ipv6 ? MHD_USE_IPv6 : 0);
    return MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
                            MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            (size_t)16384, MHD_OPTION_END);
}

unsigned serve_http_port(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}
