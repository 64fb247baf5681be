// The names fixture (test_layout_names): types whose names every producer spells its own way.
// Built with g++ and clang++ in every debug format; check.py holds their names to gdb's, to the
// demangler's and to one another.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

namespace nm {
enum E { ea, eb };
enum class EC : unsigned char { x, y };
struct S {
    int s;
};
struct M {
    int mm;
    int f() const { return mm; }
};
extern int gv;
template <typename T> struct Box {
    T v;
};
template <auto V> struct Val {
    int a;
};
template <typename... T> struct Pack {
    int a;
};
template <template <typename> class TT> struct TTp {
    TT<int> a;
};
template <typename T, unsigned long N> struct Buf {
    T a[N > 4 ? 4 : N];
};
using Alias = Box<long>;      // --type nm::Alias finds nm::Box<long>
typedef Val<500ul> Val500;    // --type nm::Val500 finds nm::Val<500ul>

// Lambdas in an inline function: every unit has them (one closure each, kept once), and both
// compilers mangle them (clang numbers them as the ABI does, g++ 12 in one sequence).
inline int lambdas(int k)
{
    auto a = [](int x) { return x + 1; };
    auto b = []() { return 2; };
    auto c = [k](int x) { return x + k; };
    auto d = [&](long y) {
        auto e = [y]() { return (int)y; };
        return e();
    };
    auto g = [](auto z) { return (int)sizeof z; };
    std::function<int(int)> fn = [k](int z) { return z * k; };
    return a(1) + b() + c(2) + d(3) + g(4.0) + fn(4);
}

int local_classes(unsigned long x);
int in_other_unit();
} // namespace nm
