// Every way the Itanium C++ ABI lets members share storage (issue 20): empty members and bases at
// an address others use, a union whose members are empty [[no_unique_address]] classes (itself
// empty), empty members placed apart by a type conflict, a member or base whose tail padding
// holds later members, bit-fields in such a tail, an empty member under a vptr. DWARF does not
// mark [[no_unique_address]]: the offsets show it. For check.py, through layout_facts.h: where each
// member is, the bytes it takes and its sizeof.
#include "layout_facts.h"

namespace share
{
struct Em {
};
struct Em2 {
};
union U5 { // empty: its only member is an empty [[no_unique_address]] one
    struct E {
    };
    [[no_unique_address]] E m;
};
struct S5 { // the issue's: u shares p's address
    int *p;
    [[no_unique_address]] U5 u;
};
union U6 { // not empty: m is an ordinary member
    Em m;
};
struct S6 {
    int *p;
    [[no_unique_address]] U6 u;
};
struct H3 { // empty too
    [[no_unique_address]] Em e;
};
struct S7 {
    int x;
    [[no_unique_address]] H3 h;
};
struct B8 {
    [[no_unique_address]] Em e;
};
struct D8 : B8 { // an empty base by [[no_unique_address]] alone
    int x;
};
struct Z2 : Em { // e cannot share the base's address (same type): after a
    int a;
    [[no_unique_address]] Em e;
};
struct TwoE { // empty, two bytes
    [[no_unique_address]] Em a;
    [[no_unique_address]] Em b;
};
struct S9 {
    char c;
    [[no_unique_address]] TwoE t;
};
struct TB { // not a POD: its tail padding can be reused
    int i;
    char c;
    TB() {}
};
struct Q { // its data size is 9: b's tail is its padding
    int i;
    [[no_unique_address]] TB b;
    Q() {}
};
struct R : Q { // z in Q's tail padding, which is b's
    char z;
};
struct NUQ {
    [[no_unique_address]] Q q;
    char z;
};
struct BF { // a bit-field in a member's tail padding
    [[no_unique_address]] TB b;
    int x : 4;
};
struct EndE {
    int a;
    [[no_unique_address]] Em e;
};
struct EA : Em { // an empty base alone: it takes no byte, the class's one byte is padding
};
struct VE { // an empty member under the vtable pointer
    virtual ~VE() {}
    [[no_unique_address]] Em e;
    long v;
};
// libstdc++'s node handle, in small: a pointer beside a union of empty [[no_unique_address]]
// members (an allocator that may be absent).
template <class A> struct Handle {
    A *ptr;
    union Opt {
        Opt() {}
        ~Opt() {}
        struct Nothing {
        };
        [[no_unique_address]] Nothing none;
        [[no_unique_address]] A alloc;
    };
    [[no_unique_address]] Opt opt;
};
} // namespace share

share::S5 s5;
share::S6 s6;
share::S7 s7;
share::D8 d8;
share::Z2 z2;
share::S9 s9;
share::R r;
share::NUQ nuq;
share::BF bf;
share::EndE ende;
share::EA ea;
share::VE ve;
share::Handle<share::Em> handle;

#define N(x) "share::" #x

static void members()
{
    using namespace share;
    SIZE(N(S5), S5);
    MEMBER(N(S5), S5, u);
    TAKES(N(S5), u, 0);
    SIZEOF(N(S5), S5, u);
    PADDING(N(S5), 0);
    SIZE(N(S6), S6);
    MEMBER(N(S6), S6, u);
    WHOLE(N(S6), S6, u);
    PADDING(N(S6), sizeof(S6) - offsetof(S6, u) - 1);
    SIZE(N(S7), S7);
    MEMBER(N(S7), S7, h);
    TAKES(N(S7), h, 0);
    SIZEOF(N(S7), S7, h);
    SIZE(N(Z2), Z2);
    MEMBER(N(Z2), Z2, e);
    WHOLE(N(Z2), Z2, e);
    SIZE(N(S9), S9);
    MEMBER(N(S9), S9, t);
    TAKES(N(S9), t, 0);
    SIZEOF(N(S9), S9, t);
    PADDING(N(S9), sizeof(S9) - 1);
    SIZE(N(NUQ), NUQ);
    MEMBER(N(NUQ), NUQ, z);
    TAKES(N(NUQ), q, offsetof(NUQ, z));
    SIZEOF(N(NUQ), NUQ, q);
    PADDING(N(NUQ), sizeof(NUQ) - offsetof(NUQ, z) - 1);
    SIZE(N(BF), BF);
    BIT(N(BF), BF, x);
    TAKES(N(BF), b, 5);
    SIZE(N(EndE), EndE);
    MEMBER(N(EndE), EndE, e);
    TAKES(N(EndE), e, 0);
    PADDING(N(EndE), 0);
    SIZE(N(VE), VE);
    MEMBER(N(VE), VE, e);
    MEMBER(N(VE), VE, v);
    TAKES(N(VE), e, 0);
    SIZE("share::Handle<share::Em>", Handle<Em>);
    MEMBER("share::Handle<share::Em>", Handle<Em>, opt);
    TAKES("share::Handle<share::Em>", opt, 0);
    SIZEOF("share::Handle<share::Em>", Handle<Em>, opt);
    PADDING("share::Handle<share::Em>", 0);
}

static void bases()
{
    using namespace share;
    SIZE(N(D8), D8);
    BASE(N(D8), D8, share::B8);
    MEMBER(N(D8), D8, x);
    std::printf("takes|share::D8|share::B8|0\n");
    SIZE(N(R), R);
    BASE(N(R), R, share::Q);
    MEMBER(N(R), R, z);
    std::printf("takes|share::R|share::Q|%zu\n", offsetof(R, z));
    PADDING(N(R), sizeof(R) - offsetof(R, z) - 1);
    SIZE(N(EA), EA);
    std::printf("takes|share::EA|share::Em|0\n");
    PADDING(N(EA), 1);
}

void report_sharing()
{
    members();
    bases();
}
