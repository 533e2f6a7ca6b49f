// ws::NotImplemented: what starter code throws where an exercise is still to be written, so a
// failing test names the exercise instead of crashing or hanging.
#pragma once

#include <stdexcept>
#include <string>

namespace ws {

// Deliberately not a std::logic_error: a test that expects the contract's logic_error (say,
// wait_idle called on a worker) must not pass just because the code is still a stub.
class NotImplemented : public std::runtime_error {
  public:
    // `what` reads like "lesson 01, exercise 2: wait_idle".
    explicit NotImplemented(const std::string& what)
        : std::runtime_error("not implemented yet: " + what) {}
};

}  // namespace ws
