/* libFuzzer harness for the RESP parser. The first input byte seeds how the rest is cut into
 * receive segments; the oracle is that the commands (and the error, if any) are the same whether
 * the input arrives whole or cut, and that nothing crashes or leaks under ASan/UBSan. */
#include <stdint.h>
#include <stdlib.h>

#include "resp_feed.h"

struct digest {
    size_t commands;
    uint64_t hash;
};

static void mix(uint64_t *hash, const void *bytes, size_t len)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < len; i++)
        *hash = (*hash ^ p[i]) * 0x100000001b3ull;
}

static void digest_command(void *ctx, const struct resp_args *args)
{
    struct digest *d = ctx;
    d->commands++;
    mix(&d->hash, &args->argc, sizeof args->argc);
    for (size_t i = 0; i < args->argc; i++) {
        mix(&d->hash, &args->argv[i].len, sizeof args->argv[i].len);
        mix(&d->hash, args->argv[i].ptr, args->argv[i].len);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint32_t state = data[0] * 2654435761u + 1;
    const char *input = (const char *)data + 1;
    size--;
    size_t *cuts = malloc((size + 1) * sizeof *cuts), ncuts = 0;
    for (size_t at = 0;;) {
        state = state * 1103515245u + 12345u;
        at += 1 + (state >> 16) % 64;
        if (at >= size)
            break;
        cuts[ncuts++] = at;
    }
    struct digest whole = {0, 0xcbf29ce484222325ull}, split = whole;
    const char *whole_error = resp_feed(input, size, NULL, 0, digest_command, &whole);
    const char *split_error = resp_feed(input, size, cuts, ncuts, digest_command, &split);
    free(cuts);
    if (whole.commands != split.commands || whole.hash != split.hash ||
        (whole_error == NULL) != (split_error == NULL))
        abort();
    return 0;
}
