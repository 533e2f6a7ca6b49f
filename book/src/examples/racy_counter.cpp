// Two threads add to the same plain int with no lock: a data race.
// Build and run:  clang++ -std=c++20 -fsanitize=thread -g -O1 racy_counter.cpp && ./a.out
#include <cstdio>
#include <thread>

int counter = 0;  // shared, and neither atomic nor guarded by a mutex

void add_many() {
    for (int i = 0; i < 100000; ++i)
        ++counter;
}

int main() {
    std::thread a(add_many);
    std::thread b(add_many);
    a.join();
    b.join();
    std::printf("counter = %d (expected 200000)\n", counter);
}
