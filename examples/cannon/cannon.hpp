#pragma once
// Cannon's matrix multiplication C = A·B written once against global-view layouts (seed 003,
// Fig. 2): A is n×m, B is m×k, C is n×k on a square grid of processes; every matrix has its own
// layout, chosen by name; tiles are padded to the layout's largest block so n, m, k need not
// divide the grid.

#include <string>

#include "hit/core/environment.hpp"

namespace hit::cannon {

struct Options {
  long n = 1024;
  long m = -1;  // defaults to n
  long k = -1;  // defaults to n
  std::string type = "double";
  std::string layout_a = "blocks";
  std::string layout_b = "blocks";
  std::string layout_c = "blocks";
  std::string devices;
  std::string partition = "single";
  int reps = 3;
  int warmup = 1;
  bool check = false;
  bool json = false;
  std::string svg;
  std::uint64_t seed = 1;
  std::string a_file;
  std::string b_file;
  std::string c_out;
};

// Runs the multiplication and reports; returns the program's exit status.
int run(Environment& env, const Options& options);

}  // namespace hit::cannon
