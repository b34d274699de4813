#pragma once
// Jacobi iteration for a dense linear system A x = b, as Clarke, Ilic, Lastovetsky and Rychkov
// balance it: the rows of A (with b as an extra column) distributed by a row layout, x replicated
// and gathered by every process after every iteration, a convergence test on the largest change;
// with --balance, the rows move while it runs (hit::RowBalancer).

#include <string>

#include "../common/harness.hpp"
#include "hit/balance/row_balancer.hpp"
#include "hit/core/environment.hpp"

namespace hit::linsolve {

struct Options {
  long n = 1024;              // unknowns
  int iters = 200;            // iterations at most
  double tol = 1e-10;         // stop when max |x_new − x| <= tol
  Setting layout = "blocks";  // resolved at the start (main.cpp)
  std::string out;            // the solution as a raw file
  BalanceOptions balance;
  app::RunOptions run;
};

int run(Environment& env, const Options& options);

}  // namespace hit::linsolve
