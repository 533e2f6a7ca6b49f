// explore(): one execution after another, as the schedule dictates, until one fails or the
// schedule is exhausted; and the report.
#include <memory>
#include <ostream>

#include "ws/model/detail/execution.hpp"
#include "ws/model/detail/schedule.hpp"
#include "ws/model/explore.hpp"

namespace ws::model {

Report explore(const Options& options, const std::function<void()>& scenario) {
    detail::Schedule schedule(options);
    Report report;
    while (schedule.next_execution()) {
        auto execution = std::make_unique<detail::Execution>(options, schedule);
        execution->run(scenario);
        ++report.executions;
        if (execution->discarded()) {
            // A load read a value that no store then wrote: this execution cannot exist.
            ++report.discarded;
            if (execution->parked()) (void)execution.release();
            continue;
        }
        if (execution->failed()) {
            report.failed = true;
            report.failure = execution->failure();
            report.trace = execution->trace();
            report.schedule = schedule.replay_string();
            report.dfs_executions = schedule.dfs_executions();
            // A parked execution's threads wait forever on it: it must outlive them.
            if (execution->parked()) (void)execution.release();
            return report;
        }
        if (schedule.learns_futures()) execution->learn_futures();
    }
    report.dfs_executions = schedule.dfs_executions();
    report.dfs_complete = schedule.dfs_complete();
    return report;
}

std::ostream& operator<<(std::ostream& out, const Report& report) {
    out << report.executions << " executions (" << report.dfs_executions << " depth-first"
        << (report.dfs_complete ? ", all within the bounds" : "") << ", "
        << report.executions - report.dfs_executions << " random";
    if (report.discarded > 0) out << ", " << report.discarded << " impossible, discarded";
    out << ")";
    if (!report.failed) return out << ", no failure\n";
    return out << "; this one failed:\n"
               << report.trace << "failure: " << report.failure << "\n"
               << "replay it: Options::replay = \"" << report.schedule << "\""
               << (report.schedule.empty() ? " (the first execution: no choice was made)\n" : "\n");
}

}  // namespace ws::model
