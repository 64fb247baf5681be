/* A chunked deque in the manner of libstdc++'s std::deque, kept for comparison: a map of pointers
 * to fixed chunks of 512 bytes, the map and a first chunk allocated at init, a new chunk when the
 * last slot of the back chunk fills, each drained chunk freed. Same API as irq.h.
 *
 * A queue whose map is NULL is empty with no storage: that is where init leaves it when it cannot
 * allocate, and where move leaves the source; its next push sets the storage up. */
#ifndef QUEUE_DEQUEQ_H
#define QUEUE_DEQUEQ_H

#include "queue/queue_common.h"

#define DEQUEQ_CHUNK_BYTES 512u
#define DEQUEQ_CHUNK_LEN(T) (sizeof(T) < DEQUEQ_CHUNK_BYTES ? DEQUEQ_CHUNK_BYTES / sizeof(T) : 1u)
#define DEQUEQ_INITIAL_MAP 8u

#define DEQUEQ_DEFINE(name, T)                                                                     \
    struct name##_cursor {                                                                         \
        T *cur;                                                                                    \
        T *first;                                                                                  \
        T *last;                                                                                   \
        T **node;                                                                                  \
    };                                                                                             \
                                                                                                   \
    struct name {                                                                                  \
        T **map;                                                                                   \
        size_t map_size;                                                                           \
        struct name##_cursor start;                                                                \
        struct name##_cursor finish;                                                               \
    };                                                                                             \
                                                                                                   \
    QUEUE_HOT void name##_set_node(struct name##_cursor *c, T **node)                              \
    {                                                                                              \
        c->node = node;                                                                            \
        c->first = *node;                                                                          \
        c->last = *node + DEQUEQ_CHUNK_LEN(T);                                                     \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT T *name##_alloc_chunk(void)                                                          \
    {                                                                                              \
        return (T *)queue_alloc(DEQUEQ_CHUNK_LEN(T) * sizeof(T), alignof(T));                      \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT void name##_release_chunk(T *chunk)                                                  \
    {                                                                                              \
        queue_release(chunk, DEQUEQ_CHUNK_LEN(T) * sizeof(T));                                     \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT size_t name##_size(const struct name *q)                                             \
    {                                                                                              \
        if (q->map == NULL)                                                                        \
            return 0;                                                                              \
        ptrdiff_t nodes = q->finish.node - q->start.node;                                          \
        return (size_t)(nodes * (ptrdiff_t)DEQUEQ_CHUNK_LEN(T) +                                   \
                        (q->finish.cur - q->finish.first) - (q->start.cur - q->start.first));      \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT size_t name##_capacity(const struct name *q)                                         \
    {                                                                                              \
        if (q->map == NULL)                                                                        \
            return 0;                                                                              \
        return (size_t)(q->finish.node - q->start.node + 1) * DEQUEQ_CHUNK_LEN(T);                 \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT bool name##_on_heap(const struct name *q)                                            \
    {                                                                                              \
        return q->map != NULL;                                                                     \
    }                                                                                              \
                                                                                                   \
    QUEUE_COLD bool name##_setup(struct name *q)                                                   \
    {                                                                                              \
        T **map = (T **)queue_alloc(DEQUEQ_INITIAL_MAP * sizeof(T *), alignof(T *));               \
        if (map == NULL)                                                                           \
            return false;                                                                          \
        T *chunk = name##_alloc_chunk();                                                           \
        if (chunk == NULL) {                                                                       \
            queue_release(map, DEQUEQ_INITIAL_MAP * sizeof(T *));                                  \
            return false;                                                                          \
        }                                                                                          \
        q->map = map;                                                                              \
        q->map_size = DEQUEQ_INITIAL_MAP;                                                          \
        T **middle = map + (DEQUEQ_INITIAL_MAP - 1) / 2;                                           \
        *middle = chunk;                                                                           \
        name##_set_node(&q->start, middle);                                                        \
        q->start.cur = q->start.first;                                                             \
        q->finish = q->start;                                                                      \
        return true;                                                                               \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT void name##_init(struct name *q)                                                     \
    {                                                                                              \
        memset(q, 0, sizeof *q);                                                                   \
        qaudit_emit(QAUDIT_QUEUE_ENTER, NULL, q, NULL, 0, 0, 0);                                   \
        if (name##_setup(q))                                                                       \
            qaudit_emit(QAUDIT_QUEUE_GROW, NULL, q, NULL, 0, name##_capacity(q), 0);               \
        qaudit_emit(QAUDIT_QUEUE_LEAVE, NULL, q, NULL, 0, name##_capacity(q), 0);                  \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT T *name##_at(struct name *q, size_t i)                                               \
    {                                                                                              \
        if (i >= name##_size(q))                                                                   \
            return NULL;                                                                           \
        size_t offset = i + (size_t)(q->start.cur - q->start.first);                               \
        return q->start.node[offset / DEQUEQ_CHUNK_LEN(T)] + offset % DEQUEQ_CHUNK_LEN(T);         \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT T *name##_front(struct name *q)                                                      \
    {                                                                                              \
        return name##_at(q, 0);                                                                    \
    }                                                                                              \
                                                                                                   \
    /* Makes room for one more node after finish: recentre the nodes in the map when it is less    \
     * than half used, otherwise move them to a larger map. */                                     \
    QUEUE_COLD bool name##_reserve_node_at_back(struct name *q)                                    \
    {                                                                                              \
        if (q->map_size - (size_t)(q->finish.node - q->map) >= 2)                                  \
            return true;                                                                           \
        size_t old_nodes = (size_t)(q->finish.node - q->start.node) + 1;                           \
        size_t new_nodes = old_nodes + 1;                                                          \
        T **new_start;                                                                             \
        if (q->map_size > 2 * new_nodes) {                                                         \
            new_start = q->map + (q->map_size - new_nodes) / 2;                                    \
            memmove(new_start, q->start.node, old_nodes * sizeof(T *));                            \
        } else {                                                                                   \
            size_t new_map_size = q->map_size * 2 + 2;                                             \
            T **new_map = (T **)queue_alloc(new_map_size * sizeof(T *), alignof(T *));             \
            if (new_map == NULL)                                                                   \
                return false;                                                                      \
            new_start = new_map + (new_map_size - new_nodes) / 2;                                  \
            memcpy(new_start, q->start.node, old_nodes * sizeof(T *));                             \
            queue_release(q->map, q->map_size * sizeof(T *));                                      \
            q->map = new_map;                                                                      \
            q->map_size = new_map_size;                                                            \
        }                                                                                          \
        T *start_cur = q->start.cur, *finish_cur = q->finish.cur;                                  \
        name##_set_node(&q->start, new_start);                                                     \
        name##_set_node(&q->finish, new_start + old_nodes - 1);                                    \
        q->start.cur = start_cur;                                                                  \
        q->finish.cur = finish_cur;                                                                \
        return true;                                                                               \
    }                                                                                              \
                                                                                                   \
    /* The back chunk's last slot is about to fill (or there is no storage yet): take a chunk      \
     * first, so that failure leaves the queue as it was. */                                       \
    QUEUE_COLD bool name##_grow_push(struct name *q, const T *value)                               \
    {                                                                                              \
        size_t depth = name##_size(q) + 1;                                                         \
        qaudit_emit(QAUDIT_QUEUE_ENTER, NULL, q, NULL, depth, name##_capacity(q), 0);              \
        bool ok = q->map != NULL;                                                                  \
        if (!ok && (ok = name##_setup(q)))                                                         \
            qaudit_emit(QAUDIT_QUEUE_GROW, NULL, q, NULL, depth, name##_capacity(q), 0);           \
        if (ok && q->finish.cur == q->finish.last - 1) {                                           \
            T *chunk = name##_reserve_node_at_back(q) ? name##_alloc_chunk() : NULL;               \
            if (chunk != NULL) {                                                                   \
                q->finish.node[1] = chunk;                                                         \
                *q->finish.cur = *value;                                                           \
                name##_set_node(&q->finish, q->finish.node + 1);                                   \
                q->finish.cur = q->finish.first;                                                   \
                qaudit_emit(QAUDIT_QUEUE_GROW, NULL, q, NULL, depth, name##_capacity(q), 0);       \
            }                                                                                      \
            ok = chunk != NULL;                                                                    \
        } else if (ok) {                                                                           \
            *q->finish.cur++ = *value;                                                             \
        }                                                                                          \
        qaudit_emit(QAUDIT_QUEUE_LEAVE, NULL, q, NULL, name##_size(q), name##_capacity(q), 0);     \
        if (ok)                                                                                    \
            qaudit_emit(QAUDIT_QUEUE_PUSH, NULL, q, NULL, depth, name##_capacity(q), 0);           \
        return ok;                                                                                 \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT bool name##_push(struct name *q, const T *value)                                     \
    {                                                                                              \
        if (__builtin_expect(q->map == NULL || q->finish.cur == q->finish.last - 1, 0))            \
            return name##_grow_push(q, value);                                                     \
        *q->finish.cur++ = *value;                                                                 \
        qaudit_emit(QAUDIT_QUEUE_PUSH, NULL, q, NULL, name##_size(q), name##_capacity(q), 0);      \
        return true;                                                                               \
    }                                                                                              \
                                                                                                   \
    /* The front chunk is drained: free it and step to the next one. */                            \
    QUEUE_COLD void name##_drop_front_chunk(struct name *q)                                        \
    {                                                                                              \
        name##_release_chunk(q->start.first);                                                      \
        name##_set_node(&q->start, q->start.node + 1);                                             \
        q->start.cur = q->start.first;                                                             \
        qaudit_emit(QAUDIT_QUEUE_SHRINK, NULL, q, NULL, name##_size(q), name##_capacity(q), 0);    \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT bool name##_pop(struct name *q, T *out)                                              \
    {                                                                                              \
        if (q->map == NULL || q->start.cur == q->finish.cur)                                       \
            return false;                                                                          \
        if (out != NULL)                                                                           \
            *out = *q->start.cur;                                                                  \
        if (q->start.cur != q->start.last - 1)                                                     \
            q->start.cur++;                                                                        \
        else                                                                                       \
            name##_drop_front_chunk(q);                                                            \
        qaudit_emit(QAUDIT_QUEUE_POP, NULL, q, NULL, name##_size(q), name##_capacity(q), 0);       \
        return true;                                                                               \
    }                                                                                              \
                                                                                                   \
    /* Like std::deque::clear: keeps the front chunk, frees the others. */                         \
    QUEUE_HOT void name##_clear(struct name *q)                                                    \
    {                                                                                              \
        size_t discarded = name##_size(q);                                                         \
        if (q->map != NULL) {                                                                      \
            for (T **node = q->start.node + 1; node <= q->finish.node; node++)                     \
                name##_release_chunk(*node);                                                       \
            q->finish = q->start;                                                                  \
        }                                                                                          \
        qaudit_emit(QAUDIT_QUEUE_CLEAR, NULL, q, NULL, 0, name##_capacity(q), discarded);          \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT void name##_release_storage(struct name *q)                                          \
    {                                                                                              \
        if (q->map != NULL) {                                                                      \
            for (T **node = q->start.node; node <= q->finish.node; node++)                         \
                name##_release_chunk(*node);                                                       \
            queue_release(q->map, q->map_size * sizeof(T *));                                      \
        }                                                                                          \
        memset(q, 0, sizeof *q);                                                                   \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT void name##_destroy(struct name *q)                                                  \
    {                                                                                              \
        size_t discarded = name##_size(q);                                                         \
        name##_release_storage(q);                                                                 \
        qaudit_emit(QAUDIT_QUEUE_DESTROY, NULL, q, NULL, 0, 0, discarded);                         \
    }                                                                                              \
                                                                                                   \
    QUEUE_HOT void name##_move(struct name *dst, struct name *src)                                 \
    {                                                                                              \
        if (dst == src)                                                                            \
            return;                                                                                \
        size_t discarded = name##_size(dst);                                                       \
        name##_release_storage(dst);                                                               \
        *dst = *src;                                                                               \
        memset(src, 0, sizeof *src);                                                               \
        qaudit_emit(QAUDIT_QUEUE_MOVE, NULL, dst, src, name##_size(dst), name##_capacity(dst),     \
                    discarded);                                                                    \
    }
#endif
