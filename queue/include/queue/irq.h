/* The inline ring queue: a FIFO whose first INLINE slots live inside the queue object, so a queue
 * that never holds more than INLINE values never touches the heap. Single-threaded.
 *
 * Invariants (docs/design.md has the reasons):
 *  - capacity == INLINE  <=> the inline slots are active; otherwise store.heap owns capacity slots;
 *  - capacity is a power of two, so a slot index is (head + i) & (capacity - 1);
 *  - the first heap capacity is IRQ_FIRST_HEAP(INLINE) = max(8, 2 * INLINE), then it doubles;
 *  - lowwater counts consecutive pops that left the queue at or below its low-water mark and is
 *    touched only while on the heap;
 *  - slots that hold no value are never written. */
#ifndef QUEUE_IRQ_H
#define QUEUE_IRQ_H

#include "queue/queue_common.h"

#define IRQ_FIRST_HEAP(inline_slots) ((inline_slots)*2 > 8 ? (inline_slots)*2 : 8)
#define IRQ_MAX_CAPACITY (UINT32_C(1) << 31)

/* IRQ_DEFINE(name, T, INLINE) defines struct name and its functions name_init, name_push,
 * name_pop, name_front, name_at, name_size, name_capacity, name_on_heap, name_clear, name_move
 * and name_destroy, plus the cold name_grow_push and name_shrink. */
#define IRQ_DEFINE(name, T, INLINE)                                                                \
    _Static_assert((INLINE) >= 1 && (INLINE) <= (UINT32_C(1) << 29) &&                             \
                       ((INLINE) & ((INLINE)-1)) == 0,                                             \
                   "INLINE must be a power of two from 1 to 2^29");                                \
                                                                                                   \
    struct name {                                                                                  \
        union {                                                                                    \
            T slots[INLINE];                                                                       \
            T *heap;                                                                               \
        } store;                                                                                   \
        uint32_t head;                                                                             \
        uint32_t size;                                                                             \
        uint32_t capacity;                                                                         \
        uint32_t lowwater;                                                                         \
    };                                                                                             \
                                                                                                   \
    QUEUE_HOT bool name##_on_heap(const struct name *q)                                            \
    {                                                                                              \
        return q->capacity != (INLINE);                                                            \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT T *name##_slots(struct name *q)                                                      \
    {                                                                                              \
        return name##_on_heap(q) ? q->store.heap : q->store.slots;                                 \
    }                                                                                              \
                                                                                                   \
    /* At or below this depth a pop counts towards shrinking; the first heap capacity must also    \
     * fit back into the inline slots. */                                                          \
    QUEUE_HOT uint32_t name##_lowwater_mark(uint32_t capacity)                                     \
    {                                                                                              \
        uint32_t quarter = capacity / 4;                                                           \
        if (capacity == IRQ_FIRST_HEAP(INLINE) && quarter > (INLINE))                              \
            return (INLINE);                                                                       \
        return quarter;                                                                            \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT void name##_init(struct name *q)                                                     \
    {                                                                                              \
        q->head = 0;                                                                               \
        q->size = 0;                                                                               \
        q->capacity = (INLINE);                                                                    \
        q->lowwater = 0;                                                                           \
    }                                                                                              \
                                                                                                   \
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
        return &name##_slots(q)[(q->head + i) & (q->capacity - 1)];                                \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT T *name##_front(struct name *q)                                                      \
    {                                                                                              \
        return name##_at(q, 0);                                                                    \
    }                                                                                              \
                                                                                                   \
    /* Allocates the next capacity, copies in FIFO order, appends *value (which may point into     \
     * the old storage: it is read before that storage is released) and only then frees. */        \
    QUEUE_COLD bool name##_grow_push(struct name *q, const T *value)                               \
    {                                                                                              \
        uint32_t old_capacity = q->capacity;                                                       \
        uint64_t new_capacity =                                                                    \
            name##_on_heap(q) ? (uint64_t)old_capacity * 2 : IRQ_FIRST_HEAP(INLINE);               \
        if (new_capacity > IRQ_MAX_CAPACITY || new_capacity > SIZE_MAX / sizeof(T))                \
            return false;                                                                          \
        qaudit_emit(QAUDIT_QUEUE_ENTER, NULL, q, NULL, q->size + 1, old_capacity, 0);              \
        T *fresh = (T *)queue_alloc((size_t)new_capacity * sizeof(T), alignof(T));                 \
        if (fresh == NULL) {                                                                       \
            qaudit_emit(QAUDIT_QUEUE_LEAVE, NULL, q, NULL, q->size, old_capacity, 0);              \
            return false;                                                                          \
        }                                                                                          \
        T *old = name##_slots(q);                                                                  \
        for (uint32_t i = 0; i < q->size; i++)                                                     \
            fresh[i] = old[(q->head + i) & (old_capacity - 1)];                                    \
        fresh[q->size] = *value;                                                                   \
        if (name##_on_heap(q))                                                                     \
            queue_release(old, (size_t)old_capacity * sizeof(T));                                  \
        q->store.heap = fresh;                                                                     \
        q->head = 0;                                                                               \
        q->size++;                                                                                 \
        q->capacity = (uint32_t)new_capacity;                                                      \
        q->lowwater = 0;                                                                           \
        qaudit_emit(QAUDIT_QUEUE_GROW, NULL, q, NULL, q->size, q->capacity, 0);                    \
        qaudit_emit(QAUDIT_QUEUE_LEAVE, NULL, q, NULL, q->size, q->capacity, 0);                   \
        qaudit_emit(QAUDIT_QUEUE_PUSH, NULL, q, NULL, q->size, q->capacity, 0);                    \
        return true;                                                                               \
    }                                                                                              \
                                                                                                   \
    /* Returns false, leaving the queue untouched, only when growth could not allocate. The inline \
     * case has its own branch: with a constant mask the slot index folds away for INLINE = 1. */  \
    QUEUE_HOT bool name##_push(struct name *q, const T *value)                                     \
    {                                                                                              \
        uint32_t capacity = q->capacity;                                                           \
        if (__builtin_expect(q->size == capacity, 0))                                              \
            return name##_grow_push(q, value);                                                     \
        if (capacity == (INLINE)) {                                                                \
            q->store.slots[(q->head + q->size) & ((INLINE)-1)] = *value;                           \
            q->size++;                                                                             \
        } else {                                                                                   \
            q->store.heap[(q->head + q->size) & (capacity - 1)] = *value;                          \
            if (++q->size > name##_lowwater_mark(capacity))                                        \
                q->lowwater = 0;                                                                   \
        }                                                                                          \
        qaudit_emit(QAUDIT_QUEUE_PUSH, NULL, q, NULL, q->size, capacity, 0);                       \
        return true;                                                                               \
    }                                                                                              \
                                                                                                   \
    /* Runs after a full capacity's worth of low-water pops. Never fails: without memory for the   \
     * smaller array the queue keeps the larger one and counts again from zero. */                 \
    QUEUE_COLD void name##_shrink(struct name *q)                                                  \
    {                                                                                              \
        T *old = q->store.heap;                                                                    \
        uint32_t old_capacity = q->capacity;                                                       \
        q->lowwater = 0;                                                                           \
        if (old_capacity == IRQ_FIRST_HEAP(INLINE)) {                                              \
            for (uint32_t i = 0; i < q->size; i++)                                                 \
                q->store.slots[i] = old[(q->head + i) & (old_capacity - 1)];                       \
            q->head = 0;                                                                           \
            q->capacity = (INLINE);                                                                \
            queue_release(old, (size_t)old_capacity * sizeof(T));                                  \
            qaudit_emit(QAUDIT_QUEUE_INLINE, NULL, q, NULL, q->size, q->capacity, 0);              \
            return;                                                                                \
        }                                                                                          \
        uint32_t new_capacity = old_capacity / 2;                                                  \
        qaudit_emit(QAUDIT_QUEUE_ENTER, NULL, q, NULL, q->size, old_capacity, 0);                  \
        T *fresh = (T *)queue_alloc((size_t)new_capacity * sizeof(T), alignof(T));                 \
        if (fresh != NULL) {                                                                       \
            for (uint32_t i = 0; i < q->size; i++)                                                 \
                fresh[i] = old[(q->head + i) & (old_capacity - 1)];                                \
            q->store.heap = fresh;                                                                 \
            q->head = 0;                                                                           \
            q->capacity = new_capacity;                                                            \
            queue_release(old, (size_t)old_capacity * sizeof(T));                                  \
            qaudit_emit(QAUDIT_QUEUE_SHRINK, NULL, q, NULL, q->size, q->capacity, 0);              \
        }                                                                                          \
        qaudit_emit(QAUDIT_QUEUE_LEAVE, NULL, q, NULL, q->size, q->capacity, 0);                   \
    }                                                                                              \
                                                                                                   \
    /* Copies the front into *out unless out is NULL; the vacated slot is not written. */          \
    QUEUE_HOT bool name##_pop(struct name *q, T *out)                                              \
    {                                                                                              \
        if (q->size == 0)                                                                          \
            return false;                                                                          \
        uint32_t capacity = q->capacity;                                                           \
        if (capacity == (INLINE)) {                                                                \
            if (out != NULL)                                                                       \
                *out = q->store.slots[q->head & ((INLINE)-1)];                                     \
            q->head = (q->head + 1) & ((INLINE)-1);                                                \
            q->size--;                                                                             \
            qaudit_emit(QAUDIT_QUEUE_POP, NULL, q, NULL, q->size, capacity, 0);                    \
            return true;                                                                           \
        }                                                                                          \
        if (out != NULL)                                                                           \
            *out = q->store.heap[q->head];                                                         \
        q->head = (q->head + 1) & (capacity - 1);                                                  \
        q->size--;                                                                                 \
        qaudit_emit(QAUDIT_QUEUE_POP, NULL, q, NULL, q->size, capacity, 0);                        \
        if (q->size <= name##_lowwater_mark(capacity) && ++q->lowwater >= capacity)                \
            name##_shrink(q);                                                                      \
        return true;                                                                               \
    }                                                                                              \
                                                                                                   \
    /* Empties the queue and keeps its storage. */                                                 \
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
        if (name##_on_heap(q))                                                                     \
            queue_release(q->store.heap, (size_t)q->capacity * sizeof(T));                         \
        name##_init(q);                                                                            \
    }                                                                                              \
                                                                                                   \
    /* Releases heap storage; the queue is left empty, inline and reusable. */                     \
    QUEUE_HOT void name##_destroy(struct name *q)                                                  \
    {                                                                                              \
        uint32_t discarded = q->size;                                                              \
        name##_release_storage(q);                                                                 \
        qaudit_emit(QAUDIT_QUEUE_DESTROY, NULL, q, NULL, 0, q->capacity, discarded);               \
    }                                                                                              \
                                                                                                   \
    /* dst drops what it held and takes src's values: a heap array changes owner and keeps its     \
     * head, inline values are copied in FIFO order. src is left empty, inline and reusable. */    \
    QUEUE_HOT void name##_move(struct name *dst, struct name *src)                                 \
    {                                                                                              \
        if (dst == src)                                                                            \
            return;                                                                                \
        uint32_t discarded = dst->size;                                                            \
        name##_release_storage(dst);                                                               \
        if (name##_on_heap(src)) {                                                                 \
            dst->store.heap = src->store.heap;                                                     \
            dst->head = src->head;                                                                 \
            dst->size = src->size;                                                                 \
            dst->capacity = src->capacity;                                                         \
            dst->lowwater = src->lowwater;                                                         \
        } else {                                                                                   \
            for (uint32_t i = 0; i < src->size; i++)                                               \
                dst->store.slots[i] = src->store.slots[(src->head + i) & ((INLINE)-1)];            \
            dst->size = src->size;                                                                 \
        }                                                                                          \
        name##_init(src);                                                                          \
        qaudit_emit(QAUDIT_QUEUE_MOVE, NULL, dst, src, dst->size, dst->capacity, discarded);       \
    }
#endif
