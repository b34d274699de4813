#pragma once
// The shared main() of hitmap++ programs: creates the Environment, runs the body, and turns any
// hit::Error into one line on stderr and a non-zero exit on every rank (docs/architecture.md).

#include <functional>
#include <string_view>

#include "hit/core/environment.hpp"

namespace hit {

// Exit statuses of the programs.
inline constexpr int exit_ok = 0;
inline constexpr int exit_check_failed = 1;  // --check found a wrong result
inline constexpr int exit_error = 2;         // bad input or a failure reported as hit::Error

// `body` parses its own arguments. Errors are expected to be agreed (thrown on every rank, see
// hit::collectively); rank 0 prints the line. Other exceptions are reported as internal errors.
int run_program(int argc, char** argv, std::string_view program,
                const std::function<int(Environment&, int, char**)>& body);

}  // namespace hit
