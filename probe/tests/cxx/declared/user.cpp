// A program of libshape.so, for check.py (issue 20): its classes hold shape.h's, which its own
// DWARF only declares (g++: those with key functions in the library; clang++: Box<long>).
// check.py builds libshape.so three ways: with its DWARF, with a separate debug file found by
// .gnu_debuglink, and stripped; argv[1] says which ("own", "debuglink", "stripped"), and so where
// each declared class must come from (layout_facts.h's from, takes, align_unknown,
// padding_unknown).
#include <cstring>

#include "layout_facts.h"
#include "shape.h"

struct Circle : geo::Shape {
    double r = 1;
    double area() const override { return r; }
};
struct Holder {
    char c;
    geo::Shape s;
    int tail;
};
struct Leaf : geo::Mid {
    int leaf = 1;
};
struct Boxed {
    int a;
    geo::Box<long> b;
    short z;
};
struct VB3 {
    long w = 0;
};
struct VUser : virtual VB3 { // VB3 goes after s: where, only s's size says
    int k = 0;
    geo::Shape s;
};
struct Own { // dynamic, and described here
    virtual ~Own() {}
    int n = 0;
};

Circle circle;
Holder holder;
Leaf leaf;
Boxed boxed;
Own own;
VUser vuser;

#ifdef __clang__
static const bool gcc = false;
#else
static const bool gcc = true;
#endif

int main(int argc, char **argv)
{
    bool stripped = argc > 1 && std::strcmp(argv[1], "stripped") == 0;
    const char *lib = stripped                                             ? "derived"
                      : argc > 1 && std::strcmp(argv[1], "debuglink") == 0 ? "libshape.so.debug"
                                                                           : "libshape.so";
    const char *shape = gcc ? lib : "binary", *box = gcc ? "binary" : lib;
    SIZE("Circle", Circle);
    BASE("Circle", Circle, geo::Shape);
    MEMBER("Circle", Circle, r);
    std::printf("takes|Circle|geo::Shape|%zu\n", sizeof(geo::Shape));
    std::printf("from|Circle|geo::Shape|%s\n", shape);
    std::printf("align_unknown|Circle|0\n"); // r, a double at 16 of 24 bytes, pins it to 8
    SIZE("Holder", Holder);
    MEMBER("Holder", Holder, s);
    MEMBER("Holder", Holder, tail);
    TAKES("Holder", s, sizeof(geo::Shape));
    FROM("Holder", s, shape);
    HOLES("Holder", offsetof(Holder, s) - 1);
    PADDING("Holder", sizeof(Holder) - offsetof(Holder, tail) - sizeof(int));
    std::printf("align_unknown|Holder|%d\n", stripped && gcc); // 4 or 8: s's own is unknown
    SIZE("Leaf", Leaf);
    BASE("Leaf", Leaf, geo::Mid);
    MEMBER("Leaf", Leaf, leaf);
    std::printf("from|Leaf|geo::Mid|%s\n", shape);
    if (!(stripped && gcc)) { // VB2 after Leaf's own part; stripped, nobody can place it
        VIRTUAL("Leaf", Leaf, geo::VB2);
        PADDING("Leaf", 0);
    }
    std::printf("padding_unknown|Leaf|%d\n", stripped && gcc);
    SIZE("Boxed", Boxed);
    MEMBER("Boxed", Boxed, b);
    MEMBER("Boxed", Boxed, z);
    TAKES("Boxed", b, sizeof(geo::Box<long>));
    FROM("Boxed", b, box);
    HOLES("Boxed", offsetof(Boxed, b) - sizeof(int));
    std::printf("align_unknown|Boxed|%d\n", stripped && !gcc); // 4 or 8: b's own is unknown
    SIZE("VUser", VUser);
    MEMBER("VUser", VUser, s);
    FROM("VUser", s, shape);
    if (!(stripped && gcc))
        VIRTUAL("VUser", VUser, VB3);
    else // placed nowhere rather than misplaced: s takes the room, marked derived
        ABSENT("VUser", "VB3");
    return circle.area() > 0 && holder.c == 0 && leaf.leaf == 1 && boxed.a == 0 && own.n == 0 ? 0
                                                                                              : 1;
}
