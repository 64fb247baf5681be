/* Pieces shared by the three queue templates: includes, the cold-path attribute, the hooks. */
#ifndef QUEUE_COMMON_H
#define QUEUE_COMMON_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "qaudit/hooks.h"
#include "queue/queue_alloc.h"

/* Growth and shrink stay out of line so push and pop inline to a few instructions. */
#define QUEUE_COLD __attribute__((noinline, cold, unused)) static
#define QUEUE_HOT __attribute__((unused)) static inline

#endif
