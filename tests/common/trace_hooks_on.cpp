// The hooks as a trace build compiles them (WS_TRACE=1), for test_trace.cpp, which is compiled
// as every other build is: the same macros must record here and vanish there.
#define WS_TRACE 1
#include <ws/trace.hpp>

void traced_hooks_record_a_task(std::size_t worker) {
    WS_TRACE_WORKER(worker);
    WS_TRACE_EVENT(task_begin);
    WS_TRACE_EVENT(task_end);
}

// A steal recorded as lessons 04-06 record one: a count read before the work (WS_TRACE_LOCAL)
// and after it; `stolen` stands for the thief's stolen_tasks counter.
void traced_hooks_record_a_steal(std::size_t worker, int victim, int& stolen) {
    WS_TRACE_WORKER(worker);
    WS_TRACE_LOCAL(before, stolen);
    stolen += 3;
    WS_TRACE_EVENT(steal, victim, stolen - before);
}
