// The names fixture's first unit (see names.h).
#include "names.h"

#include <cstdint>
#include <cstdio>

namespace nm {
int gv;

struct Uses {
    unsigned long plain_ul;
    long long plain_ll;
    short plain_short;
    unsigned char plain_uc;
    const char *plain_ccp;
    Box<unsigned long> ul;
    Box<long long> ll;
    Box<unsigned long long> ull;
    Box<short> sh;
    Box<unsigned short> ush;
    Box<unsigned char> uc;
    Box<signed char> sc;
    Box<unsigned __int128> u128;
    Box<long double> ld;
    Box<wchar_t> wc;
    Box<char16_t> c16;
    Box<const char *> ccp;
    Box<char const *const *> ccpcp;
    Box<const volatile int *> cvi;
    Box<volatile int *> vip;
    Box<Box<int>> nested;
    Box<int (*)(int, char)> fp;
    Box<void (*)(int, ...)> variadic;
    Box<int (*)(int) noexcept> nx;
    Box<int[3]> arr;
    Box<int (*)[3]> parr;
    Box<S[2][3]> arr2;
    Box<int M::*> pm;
    Box<int (M::*)() const> pmf;
    Val<500ul> v_ul;
    Val<3u> v_u;
    Val<-5l> v_l;
    Val<3ll> v_ll;
    Val<3ull> v_ull;
    Val<-3> v_int;
    Val<true> v_bool;
    Val<'a'> v_char;
    Val<(short)4> v_short;
    Val<ea> v_enum;
    Val<EC::y> v_scoped;
    Val<&gv> v_address;
    Pack<> empty_pack;
    Pack<int, long> pack;
    TTp<Box> template_template;
    Buf<char, 2> buf;
    std::string str;
};
Uses uses;
Alias alias;
Val500 val500;

namespace {
struct Hidden {
    long h;
};
} // namespace
Box<Hidden> hidden;

struct K {
    int m(int x) const;
};
int K::m(int x) const
{
    struct ML {
        int v;
    } l{x};
    return l.v;
}

static int internal(int x)
{
    struct IL {
        int v;
    } l{x};
    return l.v;
}

int local_classes(unsigned long x)
{
    struct L {
        std::uint64_t v;
        int w;
    } l{x, 1};
    return l.w + (int)l.v + internal(2) + K().m(3);
}
} // namespace nm

extern "C" int c_linkage(int x)
{
    struct CL {
        int v;
    } l{x};
    return l.v;
}

int main()
{
    struct ML {
        int v;
    } l{1};
    auto m = [](int z) { return z; };
    std::printf("%d\n", nm::lambdas(1) + nm::local_classes(2) + c_linkage(3) + l.v + m(4) +
                            nm::in_other_unit() + nm::uses.v_ul.a +
                            nm::val500.a + (int)nm::hidden.v.h + (int)nm::alias.v);
    return 0;
}
