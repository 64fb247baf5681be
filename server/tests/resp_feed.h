/* Drives the RESP scanner the way ringkv does (segments arriving one by one, consumed from the
 * front, a spill buffer for large bulks), for the parser's unit tests and its fuzzer. */
#ifndef RINGKV_RESP_FEED_H
#define RINGKV_RESP_FEED_H

#include <stddef.h>

#include "resp.h"

typedef void (*resp_feed_command_fn)(void *ctx, const struct resp_args *args);

/* Feeds input cut at cuts[0..ncuts) (ascending), scanning after each segment, and calls
 * on_command for every complete non-empty command. Returns the protocol error that stopped it,
 * or NULL. */
const char *resp_feed(const char *input, size_t len, const size_t *cuts, size_t ncuts,
                      resp_feed_command_fn on_command, void *ctx);

#endif
