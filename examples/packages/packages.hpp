#pragma once
// hit-packages: an irregular workload (Mandelbrot escape counts) or a regular one (C = A B by
// rows) computed by work packages dispatched on demand over the ranks' devices (hit::WorkPackages,
// after Raca and Mehofer's clusterCL), or statically, each rank its block of a row layout, for
// comparison.

#include <string>
#include <vector>

#include "../common/harness.hpp"
#include "hit/core/environment.hpp"

namespace hit::packages {

struct Options {
  std::string workload = "mandelbrot";       // mandelbrot | gemm
  long n = 2048;                             // rows (and gemm's columns and inner size)
  long width = 0;                            // mandelbrot: columns (0: n)
  int iters = 256;                           // mandelbrot: iterations at most per pixel
  std::vector<double> view{-0.7, 0.0, 2.5};  // mandelbrot: centre x, centre y, height
  Setting layout = "blocks";  // the rows of the output (and of A), resolved at the start
  // static | workPackages[:size=G|auto][,depth=D], resolved at the start
  Setting schedule = "workPackages:size=auto,depth=2";
  app::RunOptions run;
};

int run(Environment& env, const Options& options);

}  // namespace hit::packages
