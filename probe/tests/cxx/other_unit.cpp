// A second unit for classes.cpp: its own types under the names of the first unit's types of
// internal linkage (an anonymous namespace's, a static function's local class). They differ,
// and are no ODR conflict.
#include "layout_facts.h"

namespace
{
struct AnS {
    long a;
    long b;
};
} // namespace

static int helper()
{
    struct HL {
        int i;
        char c;
    } h{1, 2};
    SIZE("helper()::HL", HL);
    return h.i + h.c;
}

AnS other_ans;

void report_other_unit()
{
    SIZE("(anonymous namespace)::AnS", AnS);
    MEMBER("(anonymous namespace)::AnS", AnS, b);
    helper();
    std::printf("note|other_ans.a|%ld\n", other_ans.a); // used, for clang to describe AnS
}
