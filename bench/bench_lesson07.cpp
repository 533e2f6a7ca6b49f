// Lesson 07: fork-join on the work-stealing pool — every workload, fork-join ones included
// (fib(30) by join, parallel_reduce), against the peers. Lesson 06's pool joins the table on
// the pool workloads once lesson 06 is in (it has no join).
#include "contenders.hpp"
#include "lesson07_contender.hpp"

namespace ws::bench {

void register_benchmarks() {
    register_lesson07();
}

}  // namespace ws::bench
