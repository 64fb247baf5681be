// The names fixture's second unit: the inline function's lambdas again, kept once.
#include "names.h"

namespace nm {
int in_other_unit()
{
    return lambdas(2);
}
} // namespace nm
