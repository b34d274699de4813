#pragma once
// Tile QR factorisation A = Q·R of an m×n matrix (m ≥ n) on the task runtime, written once
// against a layout chosen by name: the tiles are the layout's blocks cut where any block begins,
// each tile's kernels run on the process that holds it, as their tiles are ready (Song, Tomov
// and Dongarra's Algorithm 2: GEQRT on the diagonal tile, LARFB along its row, TSQRT down its
// column, SSRFB on the trailing tiles), and with a right-hand side b, the least-squares solution
// of min ‖A·x − b‖ (Qᵀ·b, then R·x = (Qᵀ·b)[0:n] backwards).

#include <string>

#include "../common/harness.hpp"
#include "hit/core/environment.hpp"

namespace hit::qr {

struct Options {
  long m = 0;                       // rows; 0: n (square)
  long n = 1024;                    // columns
  long b = 256;                     // tile side of the default layout, blockCyclic:b=<b>
  Setting layout;                   // resolved at the start; its code is blockCyclic:b=<b>
  std::string topology = "mesh2d";  // the process grid the layout deals the tiles over
  std::string a_file;               // read A (m×n, row-major) from this raw file
  std::string r_out;                // write R (n×n, zeros below the diagonal)
  std::string q_out;                // write Q (m×n, formed explicitly)
  std::string rhs_file;             // b (m values): solve min ‖A·x − b‖
  std::string x_out;                // write x (n values)
  bool tune = false;                // tune heteroBlockCyclic's host share B_h first (Song et al.)
  long tune_n = 0;                  // order of the tuning problem; 0: 3·B·accelerator processes
  app::RunOptions run;

  long rows() const noexcept { return m > 0 ? m : n; }
};

// Runs the factorisation (and the solve) and reports; returns the program's exit status.
int run(Environment& env, const Options& options);

}  // namespace hit::qr
