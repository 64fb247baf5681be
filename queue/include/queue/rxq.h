/* The receive-descriptor queue a connection embeds: one inline slot of struct rx_desc. Its size
 * and field offsets are part of what the audit checks, so they are pinned here. */
#ifndef QUEUE_RXQ_H
#define QUEUE_RXQ_H

#include "queue/queue.h"

QUEUE_DEFINE(rxq, struct rx_desc, 1)

_Static_assert(sizeof(struct rx_desc) == 12, "rx_desc is 12 bytes");

#if QUEUE_VARIANT == QUEUE_VARIANT_INLINE
_Static_assert(sizeof(struct rxq) == 32, "inline rxq: 16 B of slot/pointer + 16 B of counters");
_Static_assert(offsetof(struct rxq, head) == 16, "inline rxq counters start at offset 16");
#elif QUEUE_VARIANT == QUEUE_VARIANT_RING
_Static_assert(sizeof(struct rxq) == 24, "ring rxq: pointer + head, size, capacity");
#else
_Static_assert(sizeof(struct rxq) == 80, "deque rxq: map, map size and two cursors");
#endif

#endif
