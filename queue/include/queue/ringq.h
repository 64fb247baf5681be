/* The previous ring queue, kept for comparison: no inline slot, an 8-slot heap array allocated
 * on the first push, doubling when full, never shrinking. Same API as irq.h. */
#ifndef QUEUE_RINGQ_H
#define QUEUE_RINGQ_H

#include "queue/queue_common.h"

#define RINGQ_FIRST_CAPACITY 8u
#define RINGQ_MAX_CAPACITY (UINT32_C(1) << 31)

#define RINGQ_DEFINE(name, T)                                                                      \
    struct name {                                                                                  \
        T *slots;                                                                                  \
        uint32_t head;                                                                             \
        uint32_t size;                                                                             \
        uint32_t capacity;                                                                         \
    };                                                                                             \
                                                                                                   \
    QUEUE_HOT void name##_init(struct name *q)                                                     \
    {                                                                                              \
        q->slots = NULL;                                                                           \
        q->head = 0;                                                                               \
        q->size = 0;                                                                               \
        q->capacity = 0;                                                                           \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT bool name##_on_heap(const struct name *q)                                            \
    {                                                                                              \
        return q->slots != NULL;                                                                   \
    }                                                                                              \
    QUEUE_HOT size_t name##_size(const struct name *q)                                             \
    {                                                                                              \
        return q->size;                                                                            \
    }                                                                                              \
    QUEUE_HOT size_t name##_capacity(const struct name *q)                                         \
    {                                                                                              \
        return q->capacity;                                                                        \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT T *name##_at(struct name *q, size_t i)                                               \
    {                                                                                              \
        if (i >= q->size)                                                                          \
            return NULL;                                                                           \
        return &q->slots[(q->head + i) & (q->capacity - 1)];                                       \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT T *name##_front(struct name *q)                                                      \
    {                                                                                              \
        return name##_at(q, 0);                                                                    \
    }                                                                                              \
                                                                                                   \
    QUEUE_COLD bool name##_grow_push(struct name *q, const T *value)                               \
    {                                                                                              \
        uint64_t new_capacity = q->capacity ? (uint64_t)q->capacity * 2 : RINGQ_FIRST_CAPACITY;    \
        if (new_capacity > RINGQ_MAX_CAPACITY || new_capacity > SIZE_MAX / sizeof(T))              \
            return false;                                                                          \
        qaudit_emit(QAUDIT_QUEUE_ENTER, NULL, q, NULL, q->size + 1, q->capacity, 0);               \
        T *fresh = (T *)queue_alloc((size_t)new_capacity * sizeof(T), alignof(T));                 \
        if (fresh == NULL) {                                                                       \
            qaudit_emit(QAUDIT_QUEUE_LEAVE, NULL, q, NULL, q->size, q->capacity, 0);               \
            return false;                                                                          \
        }                                                                                          \
        for (uint32_t i = 0; i < q->size; i++)                                                     \
            fresh[i] = q->slots[(q->head + i) & (q->capacity - 1)];                                \
        fresh[q->size] = *value;                                                                   \
        if (q->slots != NULL)                                                                      \
            queue_release(q->slots, (size_t)q->capacity * sizeof(T));                              \
        q->slots = fresh;                                                                          \
        q->head = 0;                                                                               \
        q->size++;                                                                                 \
        q->capacity = (uint32_t)new_capacity;                                                      \
        qaudit_emit(QAUDIT_QUEUE_GROW, NULL, q, NULL, q->size, q->capacity, 0);                    \
        qaudit_emit(QAUDIT_QUEUE_LEAVE, NULL, q, NULL, q->size, q->capacity, 0);                   \
        qaudit_emit(QAUDIT_QUEUE_PUSH, NULL, q, NULL, q->size, q->capacity, 0);                    \
        return true;                                                                               \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT bool name##_push(struct name *q, const T *value)                                     \
    {                                                                                              \
        if (__builtin_expect(q->size == q->capacity, 0))                                           \
            return name##_grow_push(q, value);                                                     \
        q->slots[(q->head + q->size) & (q->capacity - 1)] = *value;                                \
        q->size++;                                                                                 \
        qaudit_emit(QAUDIT_QUEUE_PUSH, NULL, q, NULL, q->size, q->capacity, 0);                    \
        return true;                                                                               \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT bool name##_pop(struct name *q, T *out)                                              \
    {                                                                                              \
        if (q->size == 0)                                                                          \
            return false;                                                                          \
        if (out != NULL)                                                                           \
            *out = q->slots[q->head];                                                              \
        q->head = (q->head + 1) & (q->capacity - 1);                                               \
        q->size--;                                                                                 \
        qaudit_emit(QAUDIT_QUEUE_POP, NULL, q, NULL, q->size, q->capacity, 0);                     \
        return true;                                                                               \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT void name##_clear(struct name *q)                                                    \
    {                                                                                              \
        uint32_t discarded = q->size;                                                              \
        q->head = 0;                                                                               \
        q->size = 0;                                                                               \
        qaudit_emit(QAUDIT_QUEUE_CLEAR, NULL, q, NULL, 0, q->capacity, discarded);                 \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT void name##_release_storage(struct name *q)                                          \
    {                                                                                              \
        if (q->slots != NULL)                                                                      \
            queue_release(q->slots, (size_t)q->capacity * sizeof(T));                              \
        name##_init(q);                                                                            \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT void name##_destroy(struct name *q)                                                  \
    {                                                                                              \
        uint32_t discarded = q->size;                                                              \
        name##_release_storage(q);                                                                 \
        qaudit_emit(QAUDIT_QUEUE_DESTROY, NULL, q, NULL, 0, 0, discarded);                         \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT void name##_move(struct name *dst, struct name *src)                                 \
    {                                                                                              \
        if (dst == src)                                                                            \
            return;                                                                                \
        uint32_t discarded = dst->size;                                                            \
        name##_release_storage(dst);                                                               \
        *dst = *src;                                                                               \
        name##_init(src);                                                                          \
        qaudit_emit(QAUDIT_QUEUE_MOVE, NULL, dst, src, dst->size, dst->capacity, discarded);       \
    }
#endif
