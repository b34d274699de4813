#pragma once
// Right-looking tiled Cholesky factorisation A = L·Lᵀ (L lower) of a symmetric positive definite
// n×n matrix, written once against a layout chosen by name: the tiles are the layout's blocks cut
// where any block begins (blockCyclic:b=B gives B×B tiles dealt 2-D cyclically;
// heteroBlockCyclic gives thin host tiles and wide accelerator tiles), each process factorises
// the tiles it holds, and the panels travel as fetches derived from the layout.

#include <string>

#include "../common/harness.hpp"
#include "hit/core/environment.hpp"

namespace hit::cholesky {

struct Options {
  long n = 1024;
  long b = 256;                     // tile side of the default layout, blockCyclic:b=<b>
  Setting layout;                   // resolved at the start; its code is blockCyclic:b=<b>
  std::string topology = "mesh2d";  // the process grid the layout deals the tiles over
  std::string a_file;               // read A (its lower triangle) from this raw file
  std::string c_out;                // write L (zeros above the diagonal) to this raw file
  bool lookahead = true;            // factorise the next panel before the rest of the update
  bool tune = false;                // tune heteroBlockCyclic's host share B_h first (Song et al.)
  long tune_n = 0;                  // order of the tuning problem; 0: 3·B·accelerator processes
  bool keep_b = false;              // --tune keeps the layout's B (tunes B_h only)
  bool runtime = false;             // run the tile kernels as tasks of the task runtime
  app::RunOptions run;
};

// Runs the factorisation and reports; returns the program's exit status.
int run(Environment& env, const Options& options);

}  // namespace hit::cholesky
