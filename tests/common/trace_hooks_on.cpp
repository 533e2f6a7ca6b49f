// The hooks as a trace build compiles them (WS_TRACE=1), for test_trace.cpp, which is compiled
// as every other build is: the same macros must record here and vanish there.
#define WS_TRACE 1
#include <ws/trace.hpp>

void traced_hooks_record_a_task(std::size_t worker) {
    WS_TRACE_WORKER(worker);
    WS_TRACE_EVENT(task_begin);
    WS_TRACE_EVENT(task_end);
}
