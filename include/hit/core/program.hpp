#pragma once
// The shared main() of hitmap++ programs: creates the Environment, runs the body, and turns any
// hit::Error into one line on stderr and a non-zero exit on every rank (docs/architecture.md).
// Programs include hit/program.hpp, whose run_program also answers `--hit-advise`.

#include <functional>
#include <string_view>

#include "hit/core/environment.hpp"

namespace hit {

// Exit statuses of the programs.
inline constexpr int exit_ok = 0;
inline constexpr int exit_check_failed = 1;  // --check found a wrong result
inline constexpr int exit_error = 2;         // bad input or a failure reported as hit::Error

// A program: it parses its own arguments.
using ProgramBody = std::function<int(Environment&, int, char**)>;
// What answers a program started with `--hit-advise` (or HIT_ADVISE set) in place of running it:
// the advisor's dry runs of `body` (hit/advisor/program_advice.hpp). Null: such a start is an
// error.
using ProgramAdvisor = int (*)(Environment&, std::string_view program, int argc, char** argv,
                               const ProgramBody& body);

// Whether the program is being dry-run by the advisor (`--hit-advise`): its layouts, messages and
// launches are recorded and no kernel runs, so the values kernels would compute are not there. A
// program whose path depends on such a value (a convergence test, a check that a computed value
// is positive) takes the path of the run to be priced instead (docs/advisor.md, "Any program").
inline bool dry_running(const Environment& env) noexcept {
  return env.trace() != nullptr;
}

// `body` parses its own arguments; `--hit-advise` is taken out of them first. Errors are
// expected to be agreed (thrown on every rank, see hit::collectively); rank 0 prints the line.
// Other exceptions are reported as internal errors.
int run_program(int argc, char** argv, std::string_view program, const ProgramBody& body,
                ProgramAdvisor advisor);

}  // namespace hit
