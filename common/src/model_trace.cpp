// The numbered trace of an execution, one operation a line, for a failure report.
#include <cstdio>
#include <set>
#include <string>

#include "ws/model/detail/execution.hpp"

namespace ws::model::detail {

namespace {

const char* order_name(std::memory_order order) {
    switch (order) {
        case std::memory_order_relaxed:
            return "relaxed";
        case std::memory_order_consume:
            return "consume";
        case std::memory_order_acquire:
            return "acquire";
        case std::memory_order_release:
            return "release";
        case std::memory_order_acq_rel:
            return "acq_rel";
        case std::memory_order_seq_cst:
            return "seq_cst";
    }
    return "?";
}

std::string place(const Where& where) {
    std::string file = where.file;
    if (file.empty()) return "";
    if (const auto slash = file.rfind('/'); slash != std::string::npos) file.erase(0, slash + 1);
    return file + ":" + std::to_string(where.line) + " (" + where.function + ")";
}

std::string stale(std::uint32_t newer) {
    if (newer == 0) return "";
    return " (stale: skips " + std::to_string(newer) + " newer store" + (newer > 1 ? "s)" : ")");
}

std::string line(std::string step, int thread, const std::string& what, const Where& where) {
    char head[32];
    std::snprintf(head, sizeof head, "%7s  t%d  ", step.c_str(), thread);
    std::string out = head + what;
    if (const std::string at = place(where); !at.empty()) {
        if (out.size() < 64) out.append(64 - out.size(), ' ');
        out += "  " + at;
    }
    return out + "\n";
}

}  // namespace

std::string Execution::trace() const {
    std::string out = "   step  thread, operation, atomic and value      called from\n";
    std::set<std::uint32_t> shown;  // the atomics the trace names, for the legend
    std::size_t i = 0;
    // A long setup on thread 0 before any other thread exists cannot race with anything.
    if (first_spawn_event_ > 12) {
        out += line("1-" + std::to_string(first_spawn_event_ - 1), 0,
                    std::to_string(first_spawn_event_ - 1) +
                        " operations before the first thread starts (setup, folded)",
                    Where{});
        i = first_spawn_event_ - 1;
    }
    for (; i < events_.size(); ++i) {
        const Event& e = events_[i];
        const std::string step = std::to_string(i + 1);
        auto value = [&](Bits bits) { return memory_.location(e.location).format(bits); };
        const std::string a = "a" + std::to_string(e.location);
        const std::string order = order_name(e.order);
        std::string what;
        switch (e.kind) {
            case Event::Kind::load:
                what = "load " + order + "  " + a + " -> " + value(e.value) + stale(e.newer);
                if (e.promised) what += " (from a store that runs later)";
                break;
            case Event::Kind::store:
                what = "store " + order + "  " + a + " = " + value(e.value);
                break;
            case Event::Kind::rmw:
                what = std::string(e.name) + " " + order + "  " + a + ": " + value(e.old) + " -> " +
                       value(e.value);
                break;
            case Event::Kind::cas_won:
                what = "cas " + order + "  " + a + ": " + value(e.old) + " -> " + value(e.value);
                break;
            case Event::Kind::cas_lost:
                what = "cas fails " + order + "  " + a + ": reads " + value(e.value) +
                       ", expected " + value(e.old) + stale(e.newer);
                break;
            case Event::Kind::spawn:
                what = "starts t" + std::to_string(e.other);
                break;
            case Event::Kind::join:
                what = "joins t" + std::to_string(e.other);
                break;
            case Event::Kind::end:
                what = "ends";
                break;
            case Event::Kind::destroy: {
                // A block's or a buffer's atomics die together: one line for the run.
                std::size_t last = i;
                while (last + 1 < events_.size() &&
                       events_[last + 1].kind == Event::Kind::destroy &&
                       events_[last + 1].thread == e.thread)
                    ++last;
                what = "destroys " + a;
                if (last > i) {
                    what += " .. a" + std::to_string(events_[last].location) + " (" +
                            std::to_string(last - i + 1) + " atomics)";
                    out += line(step + "-" + std::to_string(last + 1), e.thread, what, Where{});
                    i = last;
                    continue;
                }
                break;
            }
            case Event::Kind::failure:
                what = "FAILS: " + e.text;
                break;
        }
        if (e.keeps != 0) what += " (what step " + std::to_string(e.keeps) + " read)";
        if (e.kind == Event::Kind::load || e.kind == Event::Kind::store ||
            e.kind == Event::Kind::rmw || e.kind == Event::Kind::cas_won ||
            e.kind == Event::Kind::cas_lost) {
            shown.insert(e.location);
        }
        out += line(step, e.thread, what, e.where);
    }
    for (std::uint32_t id : shown)
        out += "  a" + std::to_string(id) + ": created at " +
               place(memory_.location(id).created_at) + "\n";
    return out;
}

}  // namespace ws::model::detail
