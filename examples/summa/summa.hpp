#pragma once
// SUMMA-style matrix multiplication C = A·B (A n×m, B m×k) written once against global-view
// layouts: every matrix has its own layout, chosen by name, on any process topology (a grid of
// `blocks`, unequal rectangles of `columns2d`, ...). The inner dimension is taken panel by panel:
// the owners of A[:, k0:k1] send to every process whose block of C meets those rows, the owners
// of B[k0:k1, :] to every process whose block of C meets those columns, and each process adds the
// product of the two panels to its block of C on its device. The next `lookahead` panels travel
// while this one is multiplied.

#include <string>

#include "../common/matrix_product.hpp"
#include "hit/core/environment.hpp"

namespace hit::summa {

struct Options : app::ProductOptions {
  long panel = 256;
  // Panels in flight while one is multiplied. More than one lets a process whose neighbour is a
  // step behind (a slower device) still find its next panel posted.
  int lookahead = 1;
  std::string topology = "mesh2d";
};

// Runs the multiplication and reports; returns the program's exit status.
int run(Environment& env, const Options& options);

}  // namespace hit::summa
