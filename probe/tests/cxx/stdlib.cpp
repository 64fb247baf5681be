// The standard library as programs use it (issue 20): containers with node handles, optional,
// variant, function, shared_ptr, mutex, string streams, exceptions derived from
// std::runtime_error, [[no_unique_address]]. Built by check.py in each compiler's default dialect
// and in C++11, C++14 and C++20 (what a dialect lacks is left out), every DWARF flavour; the whole
// binary must read (g++'s default once read as corrupt: std::set::insert's node handle), and each
// class below must be as the program has it (layout_facts.h). Classes only declared in the binary
// (a key function or an explicit instantiation in libstdc++) come from libstdc++'s debug build.
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>
#if __cplusplus >= 201703L
#include <optional>
#include <string_view>
#include <variant>
#endif

#include "layout_facts.h"

#define LIBSTDCXX "libstdc++.so.6.0.30"

struct Registry {
    std::set<long> ids;
    std::map<int, std::string> names;
    std::unordered_set<long> seen;
    std::unordered_map<std::string, int> index;
    std::mutex lock;
    std::condition_variable changed;
    char tag;
};
struct Callbacks {
    std::function<void(int)> on_event;
    std::shared_ptr<int> shared;
    std::weak_ptr<int> weak;
    std::unique_ptr<int[]> owned;
    std::vector<std::function<void()>> queue;
    std::deque<int> backlog;
    std::list<long> history;
    short flags;
};
struct Streams {
    int level;
    std::stringstream text; // explicitly instantiated in libstdc++: only declared here
    std::ostringstream out;
    std::string name;
    char tail;
};
struct app_error : std::runtime_error { // std::runtime_error's key function is in libstdc++
    explicit app_error(const std::string &what) : std::runtime_error(what) {}
    int code = 0;
};
struct config_error : app_error {
    using app_error::app_error;
    long line = 0;
};
struct bad_input : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
    char kind = 0;
};
#if __cplusplus >= 201703L
struct Modern {
    std::optional<long> limit;
    std::variant<int, std::string, double> value;
    std::string_view view;
    std::set<long>::node_type set_node;
    std::map<int, std::string>::node_type map_node;
    std::unordered_set<long>::node_type hash_node;
    char tail;
};
#endif
#if __cplusplus >= 202002L
struct Compact { // empty members that take no byte
    [[no_unique_address]] std::allocator<int> alloc;
    [[no_unique_address]] std::less<int> order;
    int *data;
    [[no_unique_address]] std::hash<long> hash;
    long count;
};
#endif

static void exercise(Registry &r, Callbacks &c, Streams &s)
{
    r.ids.insert(1); // instantiates the node handle (C++17) and every tree member
    r.names.insert({1, "one"});
    r.seen.insert(2);
    r.index["two"] = 2;
    {
        std::lock_guard<std::mutex> guard(r.lock);
        r.tag = 1;
    }
    r.changed.notify_all();
    c.on_event = [](int) {};
    c.shared = std::make_shared<int>(3);
    c.weak = c.shared;
    c.owned.reset(new int[2]);
    c.queue.push_back([] {});
    c.backlog.push_back(1);
    c.history.push_back(2);
    s.text << 1;
    s.out << 2;
    s.name = s.text.str();
    try {
        throw config_error("line");
    } catch (const app_error &e) {
        s.tail = e.what()[0];
    }
    try {
        throw bad_input("x");
    } catch (const std::invalid_argument &) {
    }
}

static void report_classic()
{
    SIZE("Registry", Registry);
    MEMBER("Registry", Registry, names);
    MEMBER("Registry", Registry, index);
    MEMBER("Registry", Registry, lock);
    MEMBER("Registry", Registry, changed);
    MEMBER("Registry", Registry, tag);
    WHOLE("Registry", Registry, ids);
    WHOLE("Registry", Registry, index);
    WHOLE("Registry", Registry, changed);
#ifdef __clang__ // clang leaves std::condition_variable to libstdc++, which instantiates it
    FROM("Registry", changed, LIBSTDCXX);
#endif
    SIZE("Callbacks", Callbacks);
    MEMBER("Callbacks", Callbacks, shared);
    MEMBER("Callbacks", Callbacks, weak);
    MEMBER("Callbacks", Callbacks, queue);
    MEMBER("Callbacks", Callbacks, backlog);
    MEMBER("Callbacks", Callbacks, history);
    MEMBER("Callbacks", Callbacks, flags);
    WHOLE("Callbacks", Callbacks, on_event);
    WHOLE("Callbacks", Callbacks, backlog);
    SIZE("Streams", Streams);
    MEMBER("Streams", Streams, text);
    MEMBER("Streams", Streams, out);
    MEMBER("Streams", Streams, name);
    MEMBER("Streams", Streams, tail);
    WHOLE("Streams", Streams, text);
    WHOLE("Streams", Streams, out);
    WHOLE("Streams", Streams, name);
    FROM("Streams", text, LIBSTDCXX);
    FROM("Streams", out, LIBSTDCXX);
    PADDING("Streams", sizeof(Streams) - offsetof(Streams, tail) - 1);
    std::printf("align_unknown|Streams|0\n");
    SIZE("app_error", app_error);
    MEMBER("app_error", app_error, code);
    std::printf("takes|app_error|std::runtime_error|%zu\n", sizeof(std::runtime_error));
    FROM("app_error", std::runtime_error, LIBSTDCXX);
    PADDING("app_error", sizeof(app_error) - offsetof(app_error, code) - sizeof(int));
    std::printf("align_unknown|app_error|0\n");
    SIZE("config_error", config_error);
    MEMBER("config_error", config_error, line);
    SIZE("bad_input", bad_input);
    MEMBER("bad_input", bad_input, kind);
    std::printf("takes|bad_input|std::invalid_argument|%zu\n", sizeof(std::invalid_argument));
    FROM("bad_input", std::invalid_argument, LIBSTDCXX);
}

static void report_modern()
{
#if __cplusplus >= 201703L
    SIZE("Modern", Modern);
    MEMBER("Modern", Modern, value);
    MEMBER("Modern", Modern, view);
    MEMBER("Modern", Modern, set_node);
    MEMBER("Modern", Modern, map_node);
    MEMBER("Modern", Modern, hash_node);
    MEMBER("Modern", Modern, tail);
    WHOLE("Modern", Modern, limit);
    WHOLE("Modern", Modern, value);
    WHOLE("Modern", Modern, set_node);
    WHOLE("Modern", Modern, hash_node);
    PADDING("Modern", sizeof(Modern) - offsetof(Modern, tail) - 1);
#endif
#if __cplusplus >= 202002L
    SIZE("Compact", Compact);
    MEMBER("Compact", Compact, data);
    MEMBER("Compact", Compact, count);
    TAKES("Compact", alloc, 0);
    TAKES("Compact", order, 0);
    TAKES("Compact", hash, 0);
    SIZEOF("Compact", Compact, alloc);
    WHOLE("Compact", Compact, data);
    PADDING("Compact", 0);
#endif
}

Registry registry;
Callbacks callbacks;
Streams streams;
#if __cplusplus >= 201703L
Modern modern;
#endif
#if __cplusplus >= 202002L
Compact compact;
#endif

int main()
{
    exercise(registry, callbacks, streams);
#if __cplusplus >= 201703L
    auto node = registry.ids.extract(1); // a node handle, as C++17 programs move nodes
    modern.set_node = std::move(node);
    modern.value = 2.0;
    modern.limit = 3;
#endif
    std::printf("note|dialect|%ld\n", (long)__cplusplus);
    report_classic();
    report_modern();
    return 0;
}
