/* The commands ringkv understands, each a small function from arguments to a RESP reply. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server.h"

struct command_ctx {
    struct connection *conn;
    const struct resp_arg *argv;
    size_t argc;
    struct outbuf *out;
    struct store *store;
    int64_t now;
};

struct command {
    const char *name;
    int arity; /* exact argument count including the name, or -N for at least N */
    void (*run)(struct command_ctx *ctx);
};

static bool arg_is(const struct resp_arg *arg, const char *word)
{
    size_t len = strlen(word);
    return arg->len == len && strncasecmp(arg->ptr, word, len) == 0;
}

/* A whole-argument decimal int64. */
static bool arg_int64(const struct resp_arg *arg, int64_t *out)
{
    char buf[24];
    if (arg->len == 0 || arg->len >= sizeof buf)
        return false;
    memcpy(buf, arg->ptr, arg->len);
    buf[arg->len] = '\0';
    char *end;
    long long v = strtoll(buf, &end, 10);
    if (*end != '\0' || (v == LLONG_MAX || v == LLONG_MIN))
        return false;
    *out = v;
    return true;
}

static bool copy_value(void *ctx, const char *value, size_t len)
{
    struct outbuf *out = ctx;
    reply_bulk(out, value, len);
    return !out->failed;
}

static void cmd_ping(struct command_ctx *ctx)
{
    if (ctx->argc == 1)
        reply_status(ctx->out, "PONG");
    else if (ctx->argc == 2)
        reply_bulk(ctx->out, ctx->argv[1].ptr, ctx->argv[1].len);
    else
        reply_error(ctx->out, "ERR wrong number of arguments for 'ping' command");
}

static void cmd_echo(struct command_ctx *ctx)
{
    reply_bulk(ctx->out, ctx->argv[1].ptr, ctx->argv[1].len);
}

static void cmd_get(struct command_ctx *ctx)
{
    enum store_result r =
        store_get(ctx->store, ctx->argv[1].ptr, ctx->argv[1].len, ctx->now, copy_value, ctx->out);
    if (r == STORE_NOT_FOUND)
        reply_nil(ctx->out);
}

/* SET key value [NX|XX] [EX seconds|PX milliseconds] */
static void cmd_set(struct command_ctx *ctx)
{
    enum store_set_mode mode = STORE_SET_ALWAYS;
    int64_t expire_at = 0;
    for (size_t i = 3; i < ctx->argc; i++) {
        const struct resp_arg *opt = &ctx->argv[i];
        int64_t amount;
        if (arg_is(opt, "NX") && mode == STORE_SET_ALWAYS) {
            mode = STORE_SET_IF_ABSENT;
        } else if (arg_is(opt, "XX") && mode == STORE_SET_ALWAYS) {
            mode = STORE_SET_IF_PRESENT;
        } else if ((arg_is(opt, "EX") || arg_is(opt, "PX")) && expire_at == 0 &&
                   i + 1 < ctx->argc) {
            bool seconds = arg_is(opt, "EX");
            if (!arg_int64(&ctx->argv[++i], &amount) || amount <= 0 ||
                amount > (seconds ? INT64_MAX / 1000 : INT64_MAX) - ctx->now) {
                reply_error(ctx->out, "ERR invalid expire time in 'set' command");
                return;
            }
            expire_at = ctx->now + (seconds ? amount * 1000 : amount);
        } else {
            reply_error(ctx->out, "ERR syntax error");
            return;
        }
    }
    enum store_result r = store_set(ctx->store, ctx->argv[1].ptr, ctx->argv[1].len,
                                    ctx->argv[2].ptr, ctx->argv[2].len, expire_at, mode, ctx->now);
    if (r == STORE_OK)
        reply_status(ctx->out, "OK");
    else if (r == STORE_NO_MEMORY)
        reply_error(ctx->out, "OOM command not allowed when used memory > 'maxmemory'");
    else
        reply_nil(ctx->out);
}

static void cmd_del(struct command_ctx *ctx)
{
    int64_t removed = 0;
    for (size_t i = 1; i < ctx->argc; i++) {
#if RINGKV_REGRESSION_LOOP_TEMP
        /* A planted regression (RINGKV_REGRESSION=loop_temp): a copy of each key, allocated and
         * freed inside the loop before anything else allocates or frees: one temporary
         * allocation per key deleted (the empty asm keeps the compiler from eliding it). */
        char *copy = malloc(ctx->argv[i].len + 1);
        if (copy == NULL)
            break;
        memcpy(copy, ctx->argv[i].ptr, ctx->argv[i].len);
        __asm__ volatile("" : : "r"(copy) : "memory");
        free(copy);
#endif
        removed += store_delete(ctx->store, ctx->argv[i].ptr, ctx->argv[i].len, ctx->now);
    }
    reply_int(ctx->out, removed);
}

static void cmd_exists(struct command_ctx *ctx)
{
    int64_t found = 0;
    for (size_t i = 1; i < ctx->argc; i++)
        found += store_exists(ctx->store, ctx->argv[i].ptr, ctx->argv[i].len, ctx->now);
    reply_int(ctx->out, found);
}

static void cmd_incr(struct command_ctx *ctx)
{
    int64_t value;
    switch (store_incr(ctx->store, ctx->argv[1].ptr, ctx->argv[1].len, 1, ctx->now, &value)) {
    case STORE_OK:
        reply_int(ctx->out, value);
        return;
    case STORE_OVERFLOW:
        reply_error(ctx->out, "ERR increment or decrement would overflow");
        return;
    case STORE_NO_MEMORY:
        reply_error(ctx->out, "OOM command not allowed when used memory > 'maxmemory'");
        return;
    default:
        reply_error(ctx->out, "ERR value is not an integer or out of range");
    }
}

static void cmd_mget(struct command_ctx *ctx)
{
    reply_array(ctx->out, ctx->argc - 1);
    for (size_t i = 1; i < ctx->argc; i++)
        if (store_get(ctx->store, ctx->argv[i].ptr, ctx->argv[i].len, ctx->now, copy_value,
                      ctx->out) == STORE_NOT_FOUND)
            reply_nil(ctx->out);
}

static void cmd_mset(struct command_ctx *ctx)
{
    if (ctx->argc % 2 == 0) {
        reply_error(ctx->out, "ERR wrong number of arguments for 'mset' command");
        return;
    }
    for (size_t i = 1; i + 1 < ctx->argc; i += 2) {
        if (store_set(ctx->store, ctx->argv[i].ptr, ctx->argv[i].len, ctx->argv[i + 1].ptr,
                      ctx->argv[i + 1].len, 0, STORE_SET_ALWAYS, ctx->now) != STORE_OK) {
            reply_error(ctx->out, "OOM command not allowed when used memory > 'maxmemory'");
            return;
        }
    }
    reply_status(ctx->out, "OK");
}

static void cmd_dbsize(struct command_ctx *ctx)
{
    struct store_stats stats;
    store_stats(ctx->store, &stats);
    reply_int(ctx->out, (int64_t)stats.keys);
}

static void cmd_flushall(struct command_ctx *ctx)
{
    store_flush(ctx->store);
    reply_status(ctx->out, "OK");
}

static void cmd_select(struct command_ctx *ctx)
{
    if (arg_is(&ctx->argv[1], "0"))
        reply_status(ctx->out, "OK");
    else
        reply_error(ctx->out, "ERR DB index is out of range");
}

/* The parameters redis-benchmark and redis-cli ask for, with ringkv's (fixed) values. */
static const char *const config_values[][2] = {
    {"save", ""},         {"appendonly", "no"},
    {"maxmemory", "0"},   {"databases", "1"},
    {"maxclients", NULL}, {"port", NULL},
    {"io-threads", NULL}, {"proto-max-bulk-len", "536870912"},
};

static void config_value(struct command_ctx *ctx, const char *name, const char *fixed, char *buf,
                         size_t size)
{
    const struct server_config *cfg = &ctx->conn->worker->server->config;
    if (fixed != NULL)
        snprintf(buf, size, "%s", fixed);
    else if (strcmp(name, "maxclients") == 0)
        snprintf(buf, size, "%u", cfg->maxclients);
    else if (strcmp(name, "port") == 0)
        snprintf(buf, size, "%d", ctx->conn->worker->server->port);
    else
        snprintf(buf, size, "%u", cfg->threads);
}

static bool glob_match(const char *pattern, size_t plen, const char *text)
{
    if (plen == 0)
        return *text == '\0';
    if (*pattern == '*')
        return glob_match(pattern + 1, plen - 1, text) ||
               (*text != '\0' && glob_match(pattern, plen, text + 1));
    if (*text == '\0')
        return false;
    if (*pattern != '?' && (*pattern | 32) != (*text | 32))
        return false;
    return glob_match(pattern + 1, plen - 1, text + 1);
}

static void cmd_config(struct command_ctx *ctx)
{
    if (!arg_is(&ctx->argv[1], "GET") || ctx->argc < 3) {
        reply_error(ctx->out, "ERR CONFIG: only CONFIG GET parameter [parameter ...] is supported");
        return;
    }
    size_t n = sizeof config_values / sizeof config_values[0];
    bool match[sizeof config_values / sizeof config_values[0]] = {false};
    size_t matches = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t a = 2; a < ctx->argc && !match[i]; a++)
            if (glob_match(ctx->argv[a].ptr, ctx->argv[a].len, config_values[i][0]))
                match[i] = true, matches++;
    reply_array(ctx->out, 2 * matches);
    for (size_t i = 0; i < n; i++) {
        if (!match[i])
            continue;
        char value[32];
        config_value(ctx, config_values[i][0], config_values[i][1], value, sizeof value);
        reply_cstr(ctx->out, config_values[i][0]);
        reply_cstr(ctx->out, value);
    }
}

/* COMMAND [COUNT|DOCS|INFO ...]: enough for redis-cli, which only needs a well-formed reply. */
static void cmd_command(struct command_ctx *ctx)
{
    if (ctx->argc >= 2 && arg_is(&ctx->argv[1], "COUNT"))
        reply_int(ctx->out, 19);
    else
        reply_array(ctx->out, 0);
}

static void cmd_client(struct command_ctx *ctx)
{
    struct connection *c = ctx->conn;
    if (arg_is(&ctx->argv[1], "SETNAME") && ctx->argc == 3) {
        for (size_t i = 0; i < ctx->argv[2].len; i++) {
            char ch = ctx->argv[2].ptr[i];
            if (ch <= ' ' || ch > '~') {
                reply_error(ctx->out, "ERR Client names cannot contain spaces, newlines or "
                                      "special characters.");
                return;
            }
        }
        char *name = ctx->argv[2].len ? malloc(ctx->argv[2].len) : NULL;
        if (ctx->argv[2].len && name == NULL) {
            reply_error(ctx->out, "ERR out of memory");
            return;
        }
        if (name)
            memcpy(name, ctx->argv[2].ptr, ctx->argv[2].len);
        free(c->name);
        c->name = name;
        c->name_len = (uint32_t)ctx->argv[2].len;
        reply_status(ctx->out, "OK");
    } else if (arg_is(&ctx->argv[1], "GETNAME") && ctx->argc == 2) {
        if (c->name == NULL)
            reply_nil(ctx->out);
        else
            reply_bulk(ctx->out, c->name, c->name_len);
    } else {
        reply_error(ctx->out, "ERR CLIENT: only SETNAME and GETNAME are supported");
    }
}

static void cmd_quit(struct command_ctx *ctx)
{
    reply_status(ctx->out, "OK");
    ctx->conn->flags |= CONN_CLOSE_AFTER;
}

static void cmd_info(struct command_ctx *ctx)
{
    info_write(ctx->conn, ctx->argc > 1 ? &ctx->argv[1] : NULL, ctx->out);
}

static const struct command commands[] = {
    {"ping", -1, cmd_ping},     {"echo", 2, cmd_echo},          {"get", 2, cmd_get},
    {"set", -3, cmd_set},       {"del", -2, cmd_del},           {"exists", -2, cmd_exists},
    {"incr", 2, cmd_incr},      {"mget", -2, cmd_mget},         {"mset", -3, cmd_mset},
    {"dbsize", 1, cmd_dbsize},  {"flushall", -1, cmd_flushall}, {"select", 2, cmd_select},
    {"info", -1, cmd_info},     {"config", -2, cmd_config},     {"command", -1, cmd_command},
    {"client", -2, cmd_client}, {"quit", -1, cmd_quit},
};

static const struct command *lookup(const struct resp_arg *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (arg_is(name, commands[i].name))
            return &commands[i];
    return NULL;
}

static bool arity_ok(const struct command *cmd, size_t argc)
{
    return cmd->arity >= 0 ? argc == (size_t)cmd->arity : argc >= (size_t)-cmd->arity;
}

void command_execute(struct connection *c, const struct resp_args *args, struct outbuf *out)
{
    const struct command *cmd = lookup(&args->argv[0]);
    char message[128];
    if (cmd == NULL) {
        int shown = args->argv[0].len > 40 ? 40 : (int)args->argv[0].len;
        snprintf(message, sizeof message, "ERR unknown command '%.*s'", shown, args->argv[0].ptr);
        /* The name is echoed back: keep it printable so the reply stays one line. */
        for (char *p = message; *p; p++)
            if (*p < ' ' || *p > '~')
                *p = '?';
        reply_error(out, message);
        return;
    }
    if (!arity_ok(cmd, args->argc)) {
        snprintf(message, sizeof message, "ERR wrong number of arguments for '%s' command",
                 cmd->name);
        reply_error(out, message);
        return;
    }
    struct command_ctx ctx = {c, args->argv, args->argc, out, c->worker->server->store, now_ms()};
#if RINGKV_REGRESSION_EXTRA_ALLOC
    /* A planted regression (RINGKV_REGRESSION=extra_alloc): one more allocation per request,
     * held while the command runs. */
    void *extra = malloc(64);
    __asm__ volatile("" : : "r"(extra) : "memory"); /* not elided */
    cmd->run(&ctx);
    free(extra);
#else
    cmd->run(&ctx);
#endif
}
