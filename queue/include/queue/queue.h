/* One queue API, three implementations chosen at compile time with -DQUEUE_VARIANT=...:
 * QUEUE_VARIANT_INLINE (default, irq.h), QUEUE_VARIANT_RING (ringq.h), QUEUE_VARIANT_DEQUE
 * (dequeq.h). QUEUE_DEFINE(name, T, INLINE) expands to the chosen one; the comparison variants
 * ignore INLINE. */
#ifndef QUEUE_QUEUE_H
#define QUEUE_QUEUE_H

#define QUEUE_VARIANT_INLINE 1
#define QUEUE_VARIANT_RING 2
#define QUEUE_VARIANT_DEQUE 3

#ifndef QUEUE_VARIANT
#define QUEUE_VARIANT QUEUE_VARIANT_INLINE
#endif

#include "queue/dequeq.h"
#include "queue/irq.h"
#include "queue/ringq.h"

#if QUEUE_VARIANT == QUEUE_VARIANT_INLINE
#define QUEUE_VARIANT_NAME "inline"
#define QUEUE_DEFINE(name, T, INLINE) IRQ_DEFINE(name, T, INLINE)
#elif QUEUE_VARIANT == QUEUE_VARIANT_RING
#define QUEUE_VARIANT_NAME "ring"
#define QUEUE_DEFINE(name, T, INLINE) RINGQ_DEFINE(name, T)
#elif QUEUE_VARIANT == QUEUE_VARIANT_DEQUE
#define QUEUE_VARIANT_NAME "deque"
#define QUEUE_DEFINE(name, T, INLINE) DEQUEQ_DEFINE(name, T)
#else
#error "QUEUE_VARIANT must be QUEUE_VARIANT_INLINE, QUEUE_VARIANT_RING or QUEUE_VARIANT_DEQUE"
#endif

/* The receive descriptor the audit is about: which provided buffer, how many bytes it holds,
 * how far the parser has consumed it. 12 bytes, 4-byte aligned. */
struct rx_desc {
    uint16_t buffer_id;
    uint32_t length;
    uint32_t offset;
};

#endif
