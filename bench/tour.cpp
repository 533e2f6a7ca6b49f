// The tour: every lesson's reference pool on the standard workloads, next to the peers.
// `./workshop tour` runs it and prints the table.
//
// Every lesson's pool lives in a header of the same name ("thread_pool.hpp"), so each lesson
// registers itself from a file of its own, tour_lessonNN.cpp, compiled with only that lesson
// on the include path (bench/CMakeLists.txt, ws_add_tour). Add a lesson here and there.
namespace ws::bench {

void register_tour_lesson01();
void register_tour_lesson07();

void register_benchmarks() {
    register_tour_lesson01();
    register_tour_lesson07();
}

}  // namespace ws::bench
