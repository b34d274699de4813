#pragma once
// Cannon's matrix multiplication C = A·B written once against global-view layouts (as in
// Hitmap's Fig. 2): A is n×m, B is m×k, C is n×k on a square grid of processes; every matrix has
// its own layout, chosen by name; A and B are padded to their layout's largest block so n, m, k
// need not divide the grid.

#include <string>

#include "../common/matrix_product.hpp"
#include "hit/core/environment.hpp"

namespace hit::cannon {

struct Options : app::ProductOptions {};

// Runs the multiplication and reports; returns the program's exit status.
int run(Environment& env, const Options& options);

}  // namespace hit::cannon
