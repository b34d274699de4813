#pragma once
// Conjugate gradients on a symmetric positive definite sparse matrix (hit-cg): the rows laid out
// by a sparse layout chosen by name (`rows`, `metis`), the ghosts refreshed by a halo derived
// from the layout and the graph while the interior rows compute, the matrix and the vectors kept
// on each process's device, and with --balance the rows moving between processes as their
// measured speeds ask.

#include <string>

#include "../common/harness.hpp"
#include "../common/sparse_input.hpp"
#include "hit/balance/row_balancer.hpp"

namespace hit::cg {

struct Options {
  app::SparseInput input;
  std::string rhs;  // raw values of b; empty: b = A·1
  double tol = 0;   // relative residual; 0: the type's default
  long max_iters = 10000;
  Setting layout = "rows";      // resolved at the start (main.cpp)
  std::string x_out;            // the solution as a raw file
  std::string balance = "off";  // off, cpm or fpm
  int balance_every = 5;        // iterations per balancing step
  std::string balance_models;   // stored models: files, or one name with {rank}
  app::RunOptions run;
};

// The default tolerance of --tol: 1e-8 for double, 1e-4 for float (whose CG stalls near its
// own rounding times the condition number).
template <class T>
constexpr double default_tolerance() {
  return sizeof(T) >= 8 ? 1e-8 : 1e-4;
}

int run(Environment& env, const Options& options);

}  // namespace hit::cg
