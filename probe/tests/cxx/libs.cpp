// Code from Debian's C++ library packages (libfmt-dev, libspdlog-dev, nlohmann-json3-dev,
// libboost-dev), used as their users use it, for check.py (issue 20): built like stdlib.cpp in
// each dialect and DWARF flavour, the whole binary must read and each class below be as the
// program has it. fmt::format_error's key function is in libfmt.so, whose debug file Debian's
// main archive does not ship: in g++'s DWARF a class derived from it gets the base's size from
// the room the layout leaves it, marked derived, and an alignment marked unknown.
#include <fmt/format.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <boost/circular_buffer.hpp>
#include <boost/container/small_vector.hpp>
#include <boost/optional.hpp>
#include <boost/variant.hpp>

#include "layout_facts.h"

struct Document {
    nlohmann::json body;
    fmt::memory_buffer rendered;
    boost::optional<long> revision;
    boost::container::small_vector<int, 3> marks;
    boost::variant<int, std::string> key;
    boost::circular_buffer<double> recent;
    std::shared_ptr<spdlog::logger> log;
    char state;
};
struct CountingSink : spdlog::sinks::base_sink<std::mutex> {
    long lines = 0;

  protected:
    void sink_it_(const spdlog::details::log_msg &) override { lines++; }
    void flush_() override {}
};
struct render_error : fmt::format_error { // fmt::format_error: only declared here
    using fmt::format_error::format_error;
    int where = 0;
};

Document document;

int main()
{
    document.body["a"] = {1, 2};
    fmt::format_to(std::back_inserter(document.rendered), "{}", document.body.dump());
    document.revision = 3;
    document.marks.push_back(1);
    document.key = std::string("k");
    document.recent.set_capacity(4);
    document.recent.push_back(1.5);
    auto sink = std::make_shared<CountingSink>();
    document.log = std::make_shared<spdlog::logger>("doc", sink);
    document.log->info("rendered {}", document.rendered.size());
    try {
        throw render_error("bad");
    } catch (const fmt::format_error &e) {
        document.state = e.what()[0];
    }
    SIZE("Document", Document);
    MEMBER("Document", Document, rendered);
    MEMBER("Document", Document, revision);
    MEMBER("Document", Document, marks);
    MEMBER("Document", Document, key);
    MEMBER("Document", Document, recent);
    MEMBER("Document", Document, log);
    MEMBER("Document", Document, state);
    WHOLE("Document", Document, body);
    WHOLE("Document", Document, rendered);
    WHOLE("Document", Document, marks);
    WHOLE("Document", Document, key);
    WHOLE("Document", Document, recent);
    SIZE("CountingSink", CountingSink);
    MEMBER("CountingSink", CountingSink, lines);
    SIZE("render_error", render_error);
    MEMBER("render_error", render_error, where);
    std::printf("takes|render_error|fmt::v9::format_error|%zu\n", sizeof(fmt::format_error));
#ifdef __clang__ // clang describes fmt::format_error where its vtable is used
    FROM("render_error", fmt::v9::format_error, "binary");
    SIZE("fmt::v9::format_error", fmt::format_error); // its base from libstdc++'s DWARF
    std::printf("takes|fmt::v9::format_error|std::runtime_error|%zu\n", sizeof(std::runtime_error));
    FROM("fmt::v9::format_error", std::runtime_error, "libstdc++.so.6.0.30");
    PADDING("fmt::v9::format_error", 0);
#else
    FROM("render_error", fmt::v9::format_error, "derived");
    std::printf("align_unknown|render_error|1\n"); // where is an int at 16 of 24: 4 or 8
#endif
    return 0;
}
