/* Structs for test_layout_reorganize (check.py): holes of every size, arrays, pointers, a function
 * pointer, a nested struct, a flexible array, alignas; and the kinds --reorganize must leave
 * alone (a union, bit-fields, a packed struct). Each is used, so that its DWARF is emitted. */
#include <stdalign.h>
#include <stdint.h>

struct point {
    int16_t x, y;
};
struct conn {
    char flag;
    long id;
    short port;
    void *buf;
    char state;
    int fd;
};
struct tight {
    long a;
    int b;
    int c;
};
struct flex {
    char kind;
    long n;
    short tag;
    int32_t data[];
}; /* data[] stays last */
struct arrays {
    char name[3];
    double d;
    char c;
    uint16_t s[3];
    int32_t k;
};
struct calls {
    char tag;
    void (*cb)(int);
    uint8_t u;
    struct point at;
    int64_t t;
};
struct wide {
    char a;
    alignas(16) int b;
    char c;
    double d;
    char e;
};
struct mixed {
    uint8_t a;
    uint64_t b;
    uint8_t c;
    uint32_t d;
    uint8_t e;
    uint16_t f;
    uint8_t g;
};
struct nested {
    char c;
    struct conn inner;
    char d;
};
union either {
    char c;
    long l;
};
struct bits {
    char a;
    int b : 3;
    long c;
};
struct __attribute__((packed)) squeezed {
    char a;
    long b;
};

struct conn c1;
struct tight c2;
struct flex *c3;
struct arrays c4;
struct calls c5;
struct wide c6;
struct mixed c7;
struct nested c8;
union either c9;
struct bits c10;
struct squeezed c11;

int main(void)
{
    return c1.fd + c2.b + (c3 != 0) + c4.k + c5.u + c6.b + c7.g + c8.d + c9.c + c10.a + c11.a;
}
