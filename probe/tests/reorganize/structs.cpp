// C++ classes for test_layout_reorganize (check.py): members of library types (std::string,
// std::vector, std::map, std::unique_ptr), access specifiers, a static member (not laid out), a
// template instance;
// and a class with a base and one with virtual functions, which --reorganize leaves alone.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct session {
    bool open;
    std::string name;
    char mode;
    std::vector<int> queue;
    uint16_t port;
    std::unique_ptr<int> owned;
    bool closing;
    static int count;
};
int session::count;

class registry
{
  public:
    char tag;
    std::map<int, std::string> entries;

  private:
    int32_t size_;
    double load_;
    char flags_;
};

template <class T> struct slot {
    char used;
    T value;
    short generation;
    char pinned;
};

// 1 byte in C++, no member to move: no smaller order
struct empty {
};

struct base {
    int b;
};
struct derived : base {
    char d;
    long e;
};
struct virtuals {
    virtual ~virtuals() {}
    char v;
    long w;
};

slot<double> sl;
empty e;
session s;
registry r;
derived d;
virtuals v;

int main()
{
    return s.port + r.tag + d.e + v.w + sl.used;
}
