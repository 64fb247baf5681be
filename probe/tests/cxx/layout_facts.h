// How the C++ corpus programs report their own layouts, one fact a line, for check.py to hold
// qaudit's JSON (and gdb's ptype /o) to:
//   size|TYPE|sizeof|alignof         member|TYPE|MEMBER|offsetof      bit|TYPE|MEMBER|bit offset
//   base|TYPE|BASE|offset            virtual|TYPE|BASE|offset (listed once, marked virtual)
//   padding|TYPE|tail padding        holes|TYPE|bytes in holes        absent|TYPE|MEMBER
//   types|TYPE|how many distinct types of that name (each its unit's own: no ODR conflict)
//   takes|TYPE|MEMBER|bytes the member takes in the object (qaudit's size: 0 for an empty
//         member sharing its address, a [[no_unique_address]] member's data size when later
//         members use its tail padding)
//   sizeof|TYPE|MEMBER|sizeof the member's type (qaudit's type_size, else its size; gdb's)
//   from|TYPE|MEMBER|where its only-declared class is defined: the end of a library's path,
//         or "derived" (defined nowhere: its size is the room the layout leaves it)
//   align_unknown|TYPE|0 or 1        padding_unknown|TYPE|0 or 1
//   note|...: anything else, not checked
// TYPE is spelled as qaudit and gdb name it (check.py ignores blanks when comparing).
#ifndef CORPUS_LAYOUT_FACTS_H
#define CORPUS_LAYOUT_FACTS_H

#include <cstddef>
#include <cstdio>
#include <cstring>

#define SIZE(name, T) std::printf("size|%s|%zu|%zu\n", name, sizeof(T), alignof(T))
#define MEMBER(name, T, m) std::printf("member|%s|%s|%zu\n", name, #m, offsetof(T, m))
#define PADDING(name, n) std::printf("padding|%s|%zu\n", name, (size_t)(n))
#define HOLES(name, n) std::printf("holes|%s|%zu\n", name, (size_t)(n))
#define ABSENT(name, m) std::printf("absent|%s|%s\n", name, m)
#define TYPES(name, n) std::printf("types|%s|%d\n", name, n)
#define TAKES(name, m, n) std::printf("takes|%s|%s|%zu\n", name, #m, (size_t)(n))
#define SIZEOF(name, T, m) std::printf("sizeof|%s|%s|%zu\n", name, #m, sizeof(((T *)0)->m))
// A member that takes all of its sizeof: both facts.
#define WHOLE(name, T, m)                                                                          \
    do {                                                                                           \
        SIZEOF(name, T, m);                                                                        \
        TAKES(name, m, sizeof(((T *)0)->m));                                                       \
    } while (0)
#define FROM(name, m, where) std::printf("from|%s|%s|%s\n", name, #m, where)

// Where the base subobject B of a complete T lies: the vtable knows, for a virtual base.
template <class T, class B> long base_offset()
{
    static T object;
    return (long)((char *)static_cast<B *>(&object) - (char *)&object);
}
// The same, through the base M of T (B is a base of T on more than one path).
template <class T, class M, class B> long base_offset_via()
{
    static T object;
    return (long)((char *)static_cast<B *>(static_cast<M *>(&object)) - (char *)&object);
}
#define BASE(name, T, B) std::printf("base|%s|%s|%ld\n", name, #B, base_offset<T, B>())
#define VIRTUAL(name, T, B) std::printf("virtual|%s|%s|%ld\n", name, #B, base_offset<T, B>())

// The first bit a bit-field takes: set it in a zeroed object and look (x86-64 is little endian).
inline int first_bit(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 8; k++)
            if (b[i] >> k & 1)
                return (int)(i * 8 + k);
    return -1;
}
#define BIT(name, T, m)                                                                            \
    do {                                                                                           \
        T x;                                                                                       \
        std::memset((void *)&x, 0, sizeof x);                                                      \
        x.m = 1;                                                                                   \
        std::printf("bit|%s|%s|%d\n", name, #m, first_bit(&x, sizeof x));                          \
    } while (0)

#endif
