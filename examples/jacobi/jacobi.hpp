#pragma once
// 2-D 5-point Jacobi on an N×N grid: the outer ring is a fixed (Dirichlet) boundary, every
// interior point becomes the mean of its four neighbours each iteration. Distributed by a layout
// chosen by name on a `mesh2d` topology; one-element ghost borders filled by a reusable halo.

#include <cstdint>
#include <string>

#include "hit/core/environment.hpp"

namespace hit::jacobi {

struct Options {
  long n = 1024;
  int iters = 100;
  std::string type = "double";
  std::string layout = "blocks";
  std::string topology = "mesh2d";
  std::string devices;
  std::string partition = "single";
  int reps = 3;
  int warmup = 1;
  bool check = false;
  bool json = false;
  std::string svg;
  std::string out;  // final field as a raw file
};

int run(Environment& env, const Options& options);

}  // namespace hit::jacobi
