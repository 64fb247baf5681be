// How the C++ corpus programs report their own layouts, one fact a line, for check.py to hold
// qaudit's JSON (and gdb's ptype /o) to:
//   size|TYPE|sizeof|alignof         member|TYPE|MEMBER|offsetof      bit|TYPE|MEMBER|bit offset
//   base|TYPE|BASE|offset            virtual|TYPE|BASE|offset (listed once, marked virtual)
//   padding|TYPE|tail padding        holes|TYPE|bytes in holes        absent|TYPE|MEMBER
//   types|TYPE|how many distinct types of that name (each its unit's own: no ODR conflict)
//   note|...: anything else, not checked
// TYPE is spelled as qaudit and gdb name it (check.py ignores blanks when comparing).
#ifndef CORPUS_REPORT_H
#define CORPUS_REPORT_H

#include <cstddef>
#include <cstdio>
#include <cstring>

#define SIZE(name, T) std::printf("size|%s|%zu|%zu\n", name, sizeof(T), alignof(T))
#define MEMBER(name, T, m) std::printf("member|%s|%s|%zu\n", name, #m, offsetof(T, m))
#define PADDING(name, n) std::printf("padding|%s|%zu\n", name, (size_t)(n))
#define HOLES(name, n) std::printf("holes|%s|%zu\n", name, (size_t)(n))
#define ABSENT(name, m) std::printf("absent|%s|%s\n", name, m)
#define TYPES(name, n) std::printf("types|%s|%d\n", name, n)

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
