/* RESP2 reply encoding into a growable buffer. A failed allocation marks the buffer failed and
 * drops further output, so the caller can close the connection instead of sending half a reply. */
#ifndef RINGKV_REPLY_H
#define RINGKV_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct outbuf {
    char *data;
    size_t len, cap;
    bool failed;
};

bool out_reserve(struct outbuf *out, size_t more);
void out_append(struct outbuf *out, const void *bytes, size_t len);
void out_free(struct outbuf *out);

void reply_status(struct outbuf *out, const char *status);          /* +status */
void reply_error(struct outbuf *out, const char *message);          /* -message */
void reply_int(struct outbuf *out, int64_t value);                  /* :value */
void reply_bulk(struct outbuf *out, const char *bytes, size_t len); /* $len bytes */
void reply_cstr(struct outbuf *out, const char *text);              /* bulk of a C string */
void reply_nil(struct outbuf *out);                                 /* $-1 */
void reply_array(struct outbuf *out, size_t count);                 /* *count */

#endif
