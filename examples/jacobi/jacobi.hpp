#pragma once
// 2-D 5-point Jacobi on an N×N grid: the outer ring is a fixed (Dirichlet) boundary, every
// interior point becomes the mean of its four neighbours each iteration. Distributed by a layout
// chosen by name on a virtual topology (mesh2d by default); one-element ghost borders filled by
// reusable halos; the sweep is the library's jacobi5 kernel, the one the balancer's models measure.

#include <string>

#include "../common/harness.hpp"
#include "hit/balance/row_balancer.hpp"
#include "hit/core/environment.hpp"

namespace hit::jacobi {

struct Options {
  long n = 1024;
  int iters = 100;
  Setting layout = "blocks";  // resolved at the start (main.cpp)
  std::string topology = "mesh2d";
  std::string out;  // final field as a raw file
  // Re-partitioning of the rows while the iteration runs (off: the layout stays).
  BalanceOptions balance;
  app::RunOptions run;
};

int run(Environment& env, const Options& options);

}  // namespace hit::jacobi
