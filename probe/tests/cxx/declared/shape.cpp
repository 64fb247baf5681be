// libshape.so: the key functions of shape.h's classes and Box<long>, so their definitions live
// here only.
#include "shape.h"

namespace geo
{
Shape::~Shape() {}
double Shape::area() const
{
    return 0;
}
VB2::~VB2() {}
Mid::~Mid() {}
template struct Box<long>;
} // namespace geo
