#pragma once
// Graphs, owners and gathers for the multi-process tests of sparse communication: built in the
// tests, identical on every rank (same seeds), independent of the library's generators.

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <vector>

#include "hit/core/environment.hpp"
#include "hit/sparse/csr_rows.hpp"

namespace sparse_test {

using hit::index_t;
// Every row's columns, ascending and distinct.
using Graph = std::vector<std::vector<index_t>>;

inline MPI_Comm comm() {
  return hit::Environment::current().comm();
}
inline int rank() {
  return hit::Environment::current().rank();
}
inline int procs() {
  return hit::Environment::current().size();
}

// The 5-point grid of k x k points, diagonal included (a Poisson matrix's pattern).
inline Graph grid_graph(index_t k) {
  Graph g(static_cast<std::size_t>(k * k));
  for (index_t y = 0; y < k; ++y) {
    for (index_t x = 0; x < k; ++x) {
      auto& row = g[static_cast<std::size_t>(y * k + x)];
      if (y > 0) row.push_back((y - 1) * k + x);
      if (x > 0) row.push_back(y * k + x - 1);
      row.push_back(y * k + x);
      if (x + 1 < k) row.push_back(y * k + x + 1);
      if (y + 1 < k) row.push_back((y + 1) * k + x);
    }
  }
  return g;
}

// A random graph of n vertices (directed unless `symmetric`); every `isolated`-th vertex (0:
// none) has no edge in or out.
inline Graph random_graph(index_t n, double density, unsigned seed, bool symmetric,
                          index_t isolated = 0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::set<index_t>> adj(static_cast<std::size_t>(n));
  auto lonely = [&](index_t v) { return isolated > 0 && v % isolated == 0; };
  for (index_t r = 0; r < n; ++r) {
    for (index_t c = 0; c < n; ++c) {
      if (u(rng) >= density || lonely(r) || lonely(c)) continue;
      adj[static_cast<std::size_t>(r)].insert(c);
      if (symmetric) adj[static_cast<std::size_t>(c)].insert(r);
    }
  }
  Graph g(static_cast<std::size_t>(n));
  for (std::size_t r = 0; r < adj.size(); ++r) g[r].assign(adj[r].begin(), adj[r].end());
  return g;
}

// Random owners among the processes; `empty` (when >= 0 and there are other processes) owns
// nothing.
inline std::vector<std::int32_t> random_owners(index_t n, int procs, unsigned seed,
                                               int empty = -1) {
  std::mt19937 rng(seed);
  std::vector<std::int32_t> owners(static_cast<std::size_t>(n));
  for (auto& o : owners) {
    do {
      o = static_cast<std::int32_t>(rng() % static_cast<unsigned>(procs));
    } while (procs > 1 && o == empty);
  }
  return owners;
}

// Contiguous blocks of rows, the first n mod P one row longer.
inline std::vector<std::int32_t> block_owners(index_t n, int procs) {
  std::vector<std::int32_t> owners(static_cast<std::size_t>(n));
  const index_t base = n / procs;
  const index_t extra = n % procs;
  index_t v = 0;
  for (int p = 0; p < procs; ++p) {
    const index_t count = base + (p < extra ? 1 : 0);
    for (index_t i = 0; i < count; ++i) owners[static_cast<std::size_t>(v++)] = p;
  }
  return owners;
}

// The rows `me` owns, with their columns; in ascending order, or shuffled by `seed` (!= 0).
inline hit::CsrPattern rows_of(const Graph& g, std::span<const std::int32_t> owners, int me,
                               unsigned seed = 0) {
  hit::CsrPattern p;
  p.global_rows = p.global_cols = static_cast<index_t>(g.size());
  std::vector<index_t> mine;
  for (std::size_t v = 0; v < g.size(); ++v) {
    if (owners[v] == me) mine.push_back(static_cast<index_t>(v));
  }
  if (seed != 0) std::shuffle(mine.begin(), mine.end(), std::mt19937(seed));
  for (const index_t v : mine) {
    p.names.push_back(v);
    const auto& row = g[static_cast<std::size_t>(v)];
    p.cols.insert(p.cols.end(), row.begin(), row.end());
    p.row_ptr.push_back(static_cast<index_t>(p.cols.size()));
  }
  return p;
}

// The global vector assembled from every process's (name, value) pairs, by allgather: the
// serial reference the halo's results are compared with. Unnamed entries stay `fill`.
template <class T>
std::vector<T> gather_global(std::span<const index_t> names, std::span<const T> values, index_t n,
                             T fill = T{}) {
  const int p = procs();
  int mine = static_cast<int>(names.size());
  std::vector<int> counts(static_cast<std::size_t>(p));
  MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm());
  std::vector<int> displs(static_cast<std::size_t>(p), 0);
  std::partial_sum(counts.begin(), counts.end() - 1, displs.begin() + 1);
  const int total = displs.back() + counts.back();
  std::vector<index_t> all_names(static_cast<std::size_t>(total));
  MPI_Allgatherv(names.data(), mine, MPI_INT64_T, all_names.data(), counts.data(), displs.data(),
                 MPI_INT64_T, comm());
  std::vector<T> all_values(static_cast<std::size_t>(total));
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &type);
  MPI_Type_commit(&type);
  MPI_Allgatherv(values.data(), mine, type, all_values.data(), counts.data(), displs.data(), type,
                 comm());
  MPI_Type_free(&type);
  std::vector<T> global(static_cast<std::size_t>(n), fill);
  for (std::size_t i = 0; i < all_names.size(); ++i) {
    global[static_cast<std::size_t>(all_names[i])] = all_values[i];
  }
  return global;
}

}  // namespace sparse_test
