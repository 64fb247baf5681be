// C++ layouts qaudit must read exactly: inheritance of every kind (single, multiple, virtual,
// diamond, primary virtual bases), empty bases and [[no_unique_address]], templates, STL members,
// nested, out-of-line and function-local classes, an anonymous namespace, an anonymous struct
// named by a typedef, bit-fields, alignas, packed and #pragma pack, pointers to members, static
// members, tail padding reused, and names longer than 1,024 characters. main() prints what the
// compiler decided (layout_facts.h); other_unit.cpp adds a second unit.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "layout_facts.h"

void report_other_unit();
void report_sharing();

struct VBase {
    long vb;
};
struct VL : virtual VBase {
    int l;
};
struct VR : virtual VBase {
    int r;
};
struct Dia : VL, VR { // VBase once, after the non-virtual part
    int d;
};
struct NE { // nearly empty: a vptr only
    virtual ~NE() {}
};
struct P : virtual NE { // NE is P's primary base, at offset 0
    int p;
};
struct A {
    virtual void f() {}
};
struct B : virtual A {
};
struct C : virtual B {
};
struct D : virtual B, virtual C {
}; // every base primary: sizeof(D) == 8
struct A2 {
    virtual ~A2() {}
};
struct B2 {
    virtual ~B2() {}
};
struct C2 : virtual A2, virtual B2 {
};
struct D2 : virtual C2 {
};
struct E2 : virtual C2, virtual D2 {
};
struct VT { // not a POD: a derived class reuses its tail padding
    int i;
    char c;
    VT() {}
};
struct VP { // a POD: its tail padding stays its own
    int i;
    char c;
};
struct VC {
    char c;
};
struct W : virtual VT, virtual VC {
    char w;
};
struct W2 : virtual VP, virtual VC {
    char w;
};
struct Empty {
};
struct Empty2 {
};
struct EV : virtual Empty {
    int x;
};
struct X : virtual VBase {
    virtual void g() {}
    long x;
};

struct V2 {
    long v;
};
struct C3 : V2 { // V2 non-virtual here,
    int c;
};
struct B3 : virtual V2 { // virtual there
    int b;
};
struct D3 : C3, B3 { // B3, dynamic, is the primary base: at 0, before C3
    int d;
};

struct M1 {
    int a;
};
struct M2 {
    double b;
};
struct MI : M1, M2 {
    char c;
};
struct E1 : Empty { // the empty base optimization
    int x;
};
struct E12 : Empty, Empty2 {
    int x;
};
struct NU {
    int a;
    [[no_unique_address]] Empty e;
    char c;
};
struct NU2 {
    [[no_unique_address]] Empty e;
    int a;
};
struct TB {
    int i;
    char c;
    TB() {}
};
struct TD : TB { // d in TB's tail padding
    char d;
};
struct NUT {
    [[no_unique_address]] TB b;
    char c;
};
struct PB {
    int i;
    char c;
};
struct PD : PB {
    char d;
};

namespace ns
{
template <typename T, int N> struct Ring {
    T slots[N];
    unsigned head, size;
};
} // namespace ns
using RingI3 = ns::Ring<int, 3>;
using RingC5 = ns::Ring<char, 5>;

struct Stl {
    std::string s;
    std::vector<int> v;
    std::map<int, int> m;
    std::function<void()> f;
    std::unique_ptr<int> p;
    char tag;
};

namespace lc
{
struct A {
    int a;
};
struct Outer {
    struct Inner {
        long z;
    };
    Inner in;
    int q;
};
} // namespace lc
struct O2 {
    struct N;
    N *p;
};
struct O2::N { // defined out of line: GCC puts it at the top of the unit
    int v;
    char w;
};

namespace
{
struct AnS {
    int a;
    static int st; // no room in the class (a declaration in DWARF, not external)
};
int AnS::st;
} // namespace

typedef struct {
    int q;
    char w;
} anon_t;

struct Bits {
    unsigned a : 3, b : 5;
    int c;
    unsigned d : 20, e : 12;
    char f;
};
struct alignas(32) A32 {
    char c;
};
struct HasAligned {
    char c;
    alignas(16) int x;
    long y;
};
struct __attribute__((packed)) Pk {
    char c;
    int i;
    short s;
};
struct __attribute__((packed)) Pk2 { // no member out of place: only its size tells
    int a;
    char b;
};
#pragma pack(push, 4)
struct P4 {
    char c;
    double d;
};
#pragma pack(pop)
#pragma pack(push, 2)
struct P2 {
    char c;
    int i;
};
#pragma pack(pop)
struct HasP4 {
    char c;
    P4 p;
};
struct S {
    int x;
    void m() {}
};
struct MP {
    int S::*pm;
    void (S::*pmf)();
    char c;
};
struct WithStatic {
    static const int k = 3;
    static long counter;
    int x;
};
long WithStatic::counter;

template <int... N> struct LongV {
    int x;
};
template <int... N> LongV<N...> long_a(std::integer_sequence<int, N...>);
template <int... N> LongV<N..., 1000> long_b(std::integer_sequence<int, N...>);
using LongA = decltype(long_a(std::make_integer_sequence<int, 300>()));
using LongB = decltype(long_b(std::make_integer_sequence<int, 299>()));

struct Widget {
    int build() const;
};
int Widget::build() const
{
    struct Local {
        int a;
        long b;
    } l{1, 2};
    SIZE("Widget::build() const::Local", Local);
    MEMBER("Widget::build() const::Local", Local, b);
    return l.a + (int)l.b;
}
static int helper() // internal linkage: other_unit.cpp's helper()::HL is another type
{
    struct HL {
        char c;
    } h{1};
    SIZE("helper()::HL", HL);
    TYPES("helper()::HL", 2);
    return h.c;
}
int blocks(int v) // classes local to a block are named after the function
{
    if (v > 0) {
        struct InFirst {
            int a;
            char c;
        } x{v, 1};
        SIZE("blocks(int)::InFirst", InFirst);
        v += x.a + x.c;
    }
    if (v > 1) {
        struct InSecond {
            long z;
        } y{v};
        SIZE("blocks(int)::InSecond", InSecond);
        v += (int)y.z;
    }
    return v;
}
int f()
{
    struct Local {
        int a;
        char b;
    } l{1, 2};
    SIZE("f()::Local", Local);
    MEMBER("f()::Local", Local, b);
    return l.a + l.b;
}
int g(int v)
{
    struct Local {
        long a;
        short s;
    } l{v, 2};
    SIZE("g(int)::Local", Local);
    MEMBER("g(int)::Local", Local, s);
    return (int)l.a + l.s;
}

// Every type in DWARF: gcc leaves out the types nothing uses.
VL vl;
VR vr;
Dia dia;
P p;
D d;
E2 e2;
W w;
W2 w2;
EV ev;
X x;
D3 d3;
MI mi;
E1 e1;
E12 e12;
NU nu;
NU2 nu2;
TD td;
NUT nut;
PD pd;
RingI3 ring_i3;
RingC5 ring_c5;
Stl stl;
lc::A lc_a;
lc::Outer lc_outer;
O2 o2;
O2::N o2n;
AnS ans;
anon_t anon;
Bits bits;
A32 a32;
HasAligned has_aligned;
Pk pk;
Pk2 pk2;
P4 p4;
P2 p2;
HasP4 has_p4;
MP mp;
WithStatic with_static;
LongA long_a_value;
LongB long_b_value;

static void long_name(const char *tag, int count, int last)
{
    std::printf("%s|LongV<", tag);
    for (int i = 0; i < count; i++)
        std::printf("%d, ", i);
    std::printf("%d>|%zu|%zu\n", last, sizeof(LongA), alignof(LongA));
}

static void virtual_bases()
{
    SIZE("VL", VL);
    VIRTUAL("VL", VL, VBase);
    MEMBER("VL", VL, l);
    HOLES("VL", (base_offset<VL, VBase>()) - (offsetof(VL, l) + sizeof(int)));
    PADDING("VL", sizeof(VL) - ((base_offset<VL, VBase>()) + sizeof(VBase)));
    SIZE("Dia", Dia);
    BASE("Dia", Dia, VL);
    BASE("Dia", Dia, VR);
    VIRTUAL("Dia", Dia, VBase);
    MEMBER("Dia", Dia, d);
    SIZE("P", P);
    VIRTUAL("P", P, NE);
    MEMBER("P", P, p);
    SIZE("D", D);
    VIRTUAL("D", D, A);
    VIRTUAL("D", D, B);
    VIRTUAL("D", D, C);
    SIZE("E2", E2);
    VIRTUAL("E2", E2, A2);
    VIRTUAL("E2", E2, B2);
    VIRTUAL("E2", E2, C2);
    VIRTUAL("E2", E2, D2);
    SIZE("W", W);
    VIRTUAL("W", W, VT);
    VIRTUAL("W", W, VC);
    SIZE("W2", W2);
    VIRTUAL("W2", W2, VP);
    VIRTUAL("W2", W2, VC);
    SIZE("EV", EV);
    VIRTUAL("EV", EV, Empty);
    MEMBER("EV", EV, x);
    SIZE("X", X);
    VIRTUAL("X", X, VBase);
    MEMBER("X", X, x);
    SIZE("D3", D3);
    BASE("D3", D3, C3);
    BASE("D3", D3, B3);
    std::printf("virtual|D3|V2|%ld\n", base_offset_via<D3, B3, V2>());
    HOLES("D3",
          (base_offset<D3, C3>()) - ((base_offset<D3, B3>()) + offsetof(B3, b) + sizeof(int)));
}

static void other_bases()
{
    SIZE("MI", MI);
    BASE("MI", MI, M1);
    BASE("MI", MI, M2);
    MEMBER("MI", MI, c);
    SIZE("E1", E1);
    BASE("E1", E1, Empty);
    MEMBER("E1", E1, x);
    SIZE("E12", E12);
    BASE("E12", E12, Empty);
    BASE("E12", E12, Empty2);
    MEMBER("E12", E12, x);
    SIZE("NU", NU);
    MEMBER("NU", NU, e);
    MEMBER("NU", NU, c);
    SIZE("NU2", NU2);
    MEMBER("NU2", NU2, a);
    SIZE("TD", TD);
    MEMBER("TD", TD, d);
    PADDING("TD", sizeof(TD) - (offsetof(TD, d) + 1));
    SIZE("NUT", NUT);
    MEMBER("NUT", NUT, c);
    PADDING("NUT", sizeof(NUT) - (offsetof(NUT, c) + 1));
    SIZE("PD", PD);
    MEMBER("PD", PD, d);
    PADDING("PD", sizeof(PD) - (offsetof(PD, d) + 1));
}

static void names()
{
    SIZE("ns::Ring<int, 3>", RingI3);
    MEMBER("ns::Ring<int, 3>", RingI3, head);
    SIZE("ns::Ring<char, 5>", RingC5);
    MEMBER("ns::Ring<char, 5>", RingC5, size);
    SIZE("Stl", Stl);
    MEMBER("Stl", Stl, s);
    MEMBER("Stl", Stl, v);
    MEMBER("Stl", Stl, m);
    MEMBER("Stl", Stl, f);
    MEMBER("Stl", Stl, p);
    MEMBER("Stl", Stl, tag);
    SIZE("lc::A", lc::A);
    SIZE("lc::Outer", lc::Outer);
    MEMBER("lc::Outer", lc::Outer, q);
    SIZE("lc::Outer::Inner", lc::Outer::Inner);
    SIZE("O2::N", O2::N);
    MEMBER("O2::N", O2::N, w);
    SIZE("(anonymous namespace)::AnS", AnS);
    ABSENT("(anonymous namespace)::AnS", "st");
    TYPES("(anonymous namespace)::AnS", 2); // other_unit.cpp has its own
    SIZE("anon_t", anon_t);
    MEMBER("anon_t", anon_t, w);
    long_name("size", 299, 299);
    long_name("size", 299, 1000);
    f();
    g(3);
    Widget().build();
    helper();
    blocks(3);
}

static void plain()
{
    SIZE("Bits", Bits);
    BIT("Bits", Bits, a);
    BIT("Bits", Bits, b);
    MEMBER("Bits", Bits, c);
    BIT("Bits", Bits, d);
    BIT("Bits", Bits, e);
    MEMBER("Bits", Bits, f);
    SIZE("A32", A32);
    SIZE("HasAligned", HasAligned);
    MEMBER("HasAligned", HasAligned, x);
    MEMBER("HasAligned", HasAligned, y);
    SIZE("Pk", Pk);
    MEMBER("Pk", Pk, i);
    MEMBER("Pk", Pk, s);
    SIZE("Pk2", Pk2);
    SIZE("P4", P4);
    MEMBER("P4", P4, d);
    SIZE("P2", P2);
    MEMBER("P2", P2, i);
    SIZE("HasP4", HasP4);
    MEMBER("HasP4", HasP4, p);
    SIZE("MP", MP);
    MEMBER("MP", MP, pmf);
    MEMBER("MP", MP, c);
    PADDING("MP", sizeof(MP) - (offsetof(MP, c) + 1));
    HOLES("MP", 0);
    SIZE("WithStatic", WithStatic);
    ABSENT("WithStatic", "k");
    ABSENT("WithStatic", "counter");
}

int main()
{
    virtual_bases();
    other_bases();
    names();
    plain();
    report_other_unit();
    report_sharing();
    std::printf("note|ans|%d\n", ans.a); // used: clang leaves unused internal types out of DWARF
    return 0;
}
