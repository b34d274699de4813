#pragma once
// Heat on graphs (hit-heat), Hitmap's sparse example: every iteration sets each vertex to the
// mean of its neighbours' values (the off-diagonal pattern of a Matrix Market file, or a
// generated grid, is the graph). The vertices are laid out by a sparse layout chosen by name
// (`metis` by default); a halo derived from the layout refreshes the ghost vertices, while the
// interior vertices compute. The sum over all vertices is printed: it must not depend on the
// process count or the layout beyond rounding.

#include <string>

#include "../common/harness.hpp"
#include "../common/sparse_input.hpp"

namespace hit::heat {

struct Options {
  app::SparseInput input;
  int iters = 1000;
  std::string init;          // raw values, one per vertex; empty: the default start
  Setting layout = "metis";  // resolved at the start (main.cpp)
  std::string out;           // final values as a raw file
  app::RunOptions run;
};

// The default start, as Hitmap's example: 10 vertices at 100 (vertex floor(i N / 10) for
// i = 0..9, so one in each tenth of the vertex range), all others 0.
inline bool starts_hot(index_t vertex, index_t n) {
  for (index_t i = 0; i < 10; ++i) {
    if (vertex == i * n / 10) return true;
  }
  return false;
}
inline constexpr double hot_value = 100.0;

int run(Environment& env, const Options& options);

}  // namespace hit::heat
