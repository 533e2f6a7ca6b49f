// write_chrome_trace (<ws/trace.hpp>): the Chrome Trace Event format, JSON object form.
#include <ws/trace.hpp>

#include <cstdio>
#include <ostream>

namespace ws::trace {
namespace {

// Microseconds, the format's unit, with the nanoseconds kept as decimals.
void timestamp(std::ostream& out, std::int64_t ns) {
    char text[32];
    std::snprintf(text, sizeof(text), "%lld.%03lld", static_cast<long long>(ns / 1000),
                  static_cast<long long>(ns % 1000));
    out << text;
}

void event(std::ostream& out, bool& first, const char* name, char phase, std::size_t worker,
           std::int64_t ns) {
    out << (first ? "\n" : ",\n") << R"({"name":")" << name << R"(","ph":")" << phase
        << R"(","pid":1,"tid":)" << worker << R"(,"ts":)";
    timestamp(out, ns);
    first = false;
}

}  // namespace

void write_chrome_trace(std::ostream& out, const Recorder& recorder, std::string_view other) {
    out << R"({"displayTimeUnit":"ns","traceEvents":[)";
    bool first = true;
    for (std::size_t w = 0; w < recorder.workers(); ++w) {
        out << (first ? "\n" : ",\n") << R"({"name":"thread_name","ph":"M","pid":1,"tid":)" << w
            << R"(,"args":{"name":"worker )" << w << R"("}})";
        first = false;
    }
    for (std::size_t w = 0; w < recorder.workers(); ++w) {
        for (const Event& e : recorder.lane(w)) {
            switch (e.what) {
                case What::task_begin:
                    event(out, first, "task", 'B', w, e.ns);
                    break;
                case What::task_end:
                    event(out, first, "task", 'E', w, e.ns);
                    break;
                case What::park:
                    event(out, first, "parked", 'B', w, e.ns);
                    break;
                case What::wake:
                    event(out, first, "parked", 'E', w, e.ns);
                    break;
                case What::help_begin:
                    event(out, first, "helping", 'B', w, e.ns);
                    break;
                case What::help_end:
                    event(out, first, "helping", 'E', w, e.ns);
                    break;
                case What::steal:
                    event(out, first, e.b > 0 ? "steal" : "steal (empty)", 'i', w, e.ns);
                    out << R"(,"s":"t","args":{"victim":)" << e.a << R"(,"got":)" << e.b << "}";
                    break;
                case What::injector_take:
                    event(out, first, "injector", 'i', w, e.ns);
                    out << R"(,"s":"t","args":{"got":)" << e.b << "}";
                    break;
            }
            out << "}";
        }
    }
    out << "\n],\"otherData\":{\"dropped\":[";
    for (std::size_t w = 0; w < recorder.workers(); ++w)
        out << (w == 0 ? "" : ",") << recorder.lane(w).dropped();
    out << "]";
    if (!other.empty()) out << "," << other;
    out << "}}\n";
}

}  // namespace ws::trace
