#pragma once
// hit::run_program, the shared main() of hitmap++ programs (hit/core/program.hpp), with the
// advisor behind `--hit-advise`: started with it (or HIT_ADVISE=1), a program is dry-run on the
// candidate layouts of the processes and devices it was started with and prints their ranking
// instead of running its kernels (docs/advisor.md, "Any program").

#include <string_view>

#include "hit/advisor/program_advice.hpp"
#include "hit/core/program.hpp"

namespace hit {

inline int run_program(int argc, char** argv, std::string_view program, const ProgramBody& body) {
  return run_program(argc, argv, program, body, &advisor::advise_program);
}

}  // namespace hit
