#pragma once
// hit-packages: an irregular workload (Mandelbrot escape counts) or a regular one (C = A B by
// rows) computed by work packages dispatched on demand over the ranks' devices (hit::WorkPackages,
// after Raca and Mehofer's clusterCL), or statically, each rank its block of a row layout, for
// comparison.

#include <map>
#include <string>
#include <vector>

#include "../common/harness.hpp"
#include "hit/core/environment.hpp"

namespace hit::packages {

struct Options {
  std::string workload = "mandelbrot";       // mandelbrot | gemm | a clusterCL workload
  long n = 2048;                             // rows (and gemm's columns and inner size)
  long m = 0;                                // clusterCL workloads: the second extent (0: theirs)
  long width = 0;                            // mandelbrot: columns (0: n)
  int iters = 256;                           // mandelbrot: iterations at most per pixel
  std::vector<double> view{-0.7, 0.0, 2.5};  // mandelbrot: centre x, centre y, height
  Setting layout = "blocks";  // the rows of the output (and of A), resolved at the start
  // static | workPackages[:size=G|auto][,depth=D], resolved at the start
  Setting schedule = "workPackages:size=auto,depth=2";
  app::RunOptions run;
  // clusterCL workloads: scalars (--param), arrays read and written by name (--input, --output)
  std::map<std::string, std::string> params;
  std::map<std::string, std::string> inputs;
  std::map<std::string, std::string> outputs;
  std::string strategy = "out";  // dcs: partition the grid (out) or the atoms (in)
  bool describe = false;         // print what the workload takes and gives, and stop
};

int run(Environment& env, const Options& options);

}  // namespace hit::packages
