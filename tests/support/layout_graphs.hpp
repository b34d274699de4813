#pragma once
// Test graphs for the sparse layouts, made here so the tests depend on nothing they check: the
// 5-point grid graph (with its diagonal) of a K x K grid, optionally renumbered by a random
// permutation, held as block rows; and brute-force figures of a layout on a whole graph.

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hit/layout.hpp"
#include "hit/sparse/csr_rows.hpp"
#include "hit/sparse/generate.hpp"
#include "hit/sparse/sparse_layout.hpp"

namespace hit_test {

using hit::index_t;

// The generators' renumbering (docs/sparse.md, "Generators").
using hit::permutation;

// Rows [first, last) of the K x K grid graph (vertex y*K + x; edges to the 4 neighbours inside
// the grid, and the diagonal), renumbered by permutation(K*K, seed) when seed != 0.
inline hit::CsrPattern grid_rows(index_t k, index_t first, index_t last, std::uint64_t seed = 0) {
  const index_t n = k * k;
  std::vector<index_t> pi;
  std::vector<index_t> inverse;
  if (seed != 0) {
    pi = permutation(n, seed);
    inverse.resize(pi.size());
    for (index_t u = 0; u < n; ++u)
      inverse[static_cast<std::size_t>(pi[static_cast<std::size_t>(u)])] = u;
  }
  hit::CsrPattern g;
  g.global_rows = g.global_cols = n;
  for (index_t row = first; row < last; ++row) {
    const index_t u = seed != 0 ? inverse[static_cast<std::size_t>(row)] : row;
    const index_t x = u % k;
    const index_t y = u / k;
    std::set<index_t> cols;
    const auto add = [&](index_t v) {
      cols.insert(seed != 0 ? pi[static_cast<std::size_t>(v)] : v);
    };
    add(u);
    if (x > 0) add(u - 1);
    if (x + 1 < k) add(u + 1);
    if (y > 0) add(u - k);
    if (y + 1 < k) add(u + k);
    g.names.push_back(row);
    g.cols.insert(g.cols.end(), cols.begin(), cols.end());
    g.row_ptr.push_back(static_cast<index_t>(g.cols.size()));
  }
  return g;
}

// This process's block rows of the grid graph.
inline hit::CsrPattern grid_block(index_t k, int procs, int rank, std::uint64_t seed = 0) {
  const auto [first, last] = hit::block_range(k * k, procs, rank);
  return grid_rows(k, first, last, seed);
}

// The figures of a layout counted by brute force on the whole graph.
struct Figures {
  std::vector<hit::SparsePartStats> stats;
  index_t edge_cut = 0;
};

inline Figures brute_force(const hit::CsrPattern& whole, std::span<const std::int32_t> owner,
                           int procs) {
  Figures f;
  f.stats.resize(static_cast<std::size_t>(procs));
  std::set<std::pair<index_t, index_t>> cut;
  std::vector<std::set<index_t>> ghosts(static_cast<std::size_t>(procs));
  for (index_t i = 0; i < whole.rows(); ++i) {
    const index_t r = whole.names[static_cast<std::size_t>(i)];
    const auto p = static_cast<std::size_t>(owner[static_cast<std::size_t>(r)]);
    ++f.stats[p].rows;
    for (const index_t c : whole.columns(i)) {
      ++f.stats[p].nonzeros;
      if (owner[static_cast<std::size_t>(c)] == owner[static_cast<std::size_t>(r)]) continue;
      ghosts[p].insert(c);
      cut.insert({std::min(r, c), std::max(r, c)});
    }
  }
  for (std::size_t p = 0; p < ghosts.size(); ++p) {
    f.stats[p].ghosts = static_cast<index_t>(ghosts[p].size());
    for (const index_t c : ghosts[p])
      ++f.stats[static_cast<std::size_t>(owner[static_cast<std::size_t>(c)])].send_values;
  }
  f.edge_cut = static_cast<index_t>(cut.size());
  return f;
}

// FNV-1a of the owners: equal layouts hash equal.
inline std::uint64_t owner_hash(std::span<const std::int32_t> owner) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const std::int32_t o : owner) {
    h ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(o));
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace hit_test
