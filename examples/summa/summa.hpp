#pragma once
// SUMMA-style matrix multiplication C = A·B (A n×m, B m×k) written once against global-view
// layouts: every matrix has its own layout, chosen by name, on any process topology (a grid of
// `blocks`, unequal rectangles of `columns2d`, ...). The inner dimension is taken panel by panel:
// the owners of A[:, k0:k1] send to every process whose block of C meets those rows, the owners
// of B[k0:k1, :] to every process whose block of C meets those columns, and each process adds the
// product of the two panels to its block of C on its device. The next panel travels while this one
// is multiplied.

#include <string>

#include "../common/harness.hpp"
#include "hit/core/environment.hpp"

namespace hit::summa {

struct Options {
  long n = 1024;
  long m = -1;  // defaults to n
  long k = -1;  // defaults to n
  long panel = 256;
  std::string topology = "mesh2d";
  std::string layout_a = "blocks";
  std::string layout_b = "blocks";
  std::string layout_c = "blocks";
  std::string a_file;
  std::string b_file;
  std::string c_out;
  app::RunOptions run;
};

// Runs the multiplication and reports; returns the program's exit status.
int run(Environment& env, const Options& options);

}  // namespace hit::summa
