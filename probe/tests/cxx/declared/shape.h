// A library's classes that its users only declare in their DWARF (issue 20): Shape, VB2 and Mid
// have their key functions (the first non-inline virtual function) in libshape.so, so g++
// describes them only there; Box<long> is instantiated there, so clang++ describes it only there.
// Mid inherits VB2 virtually.
#ifndef SHAPE_H
#define SHAPE_H

namespace geo
{
struct Shape {
    virtual ~Shape();
    virtual double area() const;
    long id = 0;
};
struct VB2 {
    virtual ~VB2();
    long q = 0;
};
struct Mid : virtual VB2 {
    ~Mid() override;
    int m = 0;
};
template <class T> struct Box { // (clang++ leaves out a class instantiated elsewhere that has
    T value;                    // member functions)
    char tag;
    T get() const { return value; }
};
extern template struct Box<long>;
} // namespace geo

#endif
