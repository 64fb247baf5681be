// libstdc++'s iostreams, whose virtual base std::basic_ios sits after each stream's own part:
// where a program built against the same headers finds it, for check.py to hold the layouts qaudit
// reads from libstdc++'s own debug build to. Names as libstdc++'s DWARF spells them.
#include <fstream>
#include <sstream>
#include <strstream>

#include "layout_facts.h"

// The virtual base's offset in a complete T made by ctor arguments (istream and ostream have no
// public default constructor).
template <class T, class... Args> long ios_offset(Args... args)
{
    static T object(args...);
    return (long)((char *)static_cast<std::basic_ios<typename T::char_type> *>(&object) -
                  (char *)&object);
}
#define STREAM(name, T, ios, ...)                                                                  \
    do {                                                                                           \
        SIZE(name, T);                                                                             \
        std::printf("virtual|%s|%s|%ld\n", name, ios, ios_offset<T>(__VA_ARGS__));                 \
    } while (0)
#define IOS "std::basic_ios<char, std::char_traits<char> >"
#define WIOS "std::basic_ios<wchar_t, std::char_traits<wchar_t> >"
#define TRAITS(c) "<" c ", std::char_traits<" c "> >"
#define ALLOC(c) "<" c ", std::char_traits<" c ">, std::allocator<" c "> >"

int main()
{
    std::streambuf *none = nullptr;
    STREAM("std::basic_istream" TRAITS("char"), std::istream, IOS, none);
    STREAM("std::basic_ostream" TRAITS("char"), std::ostream, IOS, none);
    STREAM("std::basic_iostream" TRAITS("char"), std::iostream, IOS, none);
    static std::iostream both(none);
    std::printf("base|%s|%s|%ld\n", "std::basic_iostream" TRAITS("char"),
                "std::basic_ostream" TRAITS("char"),
                (long)((char *)static_cast<std::ostream *>(&both) - (char *)&both));
    STREAM("std::basic_fstream" TRAITS("char"), std::fstream, IOS);
    STREAM("std::basic_ifstream" TRAITS("char"), std::ifstream, IOS);
    STREAM("std::basic_ofstream" TRAITS("char"), std::ofstream, IOS);
    STREAM("std::__cxx11::basic_stringstream" ALLOC("char"), std::stringstream, IOS);
    STREAM("std::__cxx11::basic_istringstream" ALLOC("char"), std::istringstream, IOS);
    STREAM("std::__cxx11::basic_ostringstream" ALLOC("char"), std::ostringstream, IOS);
    STREAM("std::basic_fstream" TRAITS("wchar_t"), std::wfstream, WIOS);
    STREAM("std::__cxx11::basic_stringstream" ALLOC("wchar_t"), std::wstringstream, WIOS);
    STREAM("std::strstream", std::strstream, IOS);
    return 0;
}
