#pragma once
// Test matrices made from a formula instead of a file (docs/sparse.md, "Generators"): the 5- and
// 7-point Laplacians of a K×K or K×K×K grid, optionally with the unknowns renumbered by a fixed
// pseudo-random permutation. Every process makes only its own block rows, without talking to the
// others, so a run on a matrix of any size starts without a file and without a root process.
//
//   poisson2d:n=K   N = K² unknowns; grid point (x, y), 0 <= x, y < K, is unknown u = y·K + x;
//                   row u has 4 on the diagonal and -1 at (x±1, y), (x, y±1) inside the grid.
//   poisson3d:n=K   N = K³, u = (z·K + y)·K + x, 6 on the diagonal, -1 for the 6 neighbours.
//   ,permute[=SEED] entry (pi[u], pi[v]) = a(u, v), with pi the permutation of 0..N-1 that
//                   permutation() makes (a bare `permute` is SEED = 1). A layout by row number
//                   is then poor, which is what graph partitioners are for.
//
// Both matrices are symmetric positive definite (Dirichlet boundary), so CG converges on them.

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hit/shape.hpp"
#include "hit/sparse/csr_rows.hpp"

namespace hit {

enum class GeneratorKind { poisson2d, poisson3d };

struct GeneratorSpec {
  GeneratorKind kind = GeneratorKind::poisson2d;
  index_t n = 1;                              // grid points along each axis (K)
  std::optional<std::uint64_t> permute_seed;  // none: the natural numbering

  // Parses `poisson2d:n=K[,permute[=SEED]]` or `poisson3d:...`. hit::Spec is not used: it reads
  // a bare token as the continuation of the previous value, and `permute` is a bare key here.
  // Error(parse) naming the text for an unknown generator or key, a missing, zero, negative or
  // non-integer n, an n whose N (or its nonzeros) does not fit a 64-bit count, a seed that is
  // not an unsigned 64-bit integer, a key given twice.
  static GeneratorSpec parse(std::string_view text);
  // The canonical text, which parse() reads back to the same spec.
  [[nodiscard]] std::string str() const;

  friend bool operator==(const GeneratorSpec&, const GeneratorSpec&) = default;
};

// N, the number of rows (and columns) of the generated matrix.
[[nodiscard]] index_t generated_rows(const GeneratorSpec& spec);

// pi: identity, then for i = N-1 down to 1, swap(pi[i], pi[next() % (i+1)]), next() being
// SplitMix64 from state `seed` (exactly the definition above, so another program can rebuild
// it). O(N) time and memory.
[[nodiscard]] std::vector<index_t> permutation(index_t n, std::uint64_t seed);

// Rows [first, last) of the generated matrix (global names, columns ascending, values of T),
// made by this process alone. With a permutation, pi and its inverse are built (O(N)).
// Error(invalid_argument) when the range is not inside [0, N).
template <class T>
[[nodiscard]] CsrRows<T> generate_rows(const GeneratorSpec& spec, index_t first, index_t last);

// This process's block rows of the generated matrix: rows block_range(N, P, p) of the shared
// definition (the first N mod P processes one row more). Not collective: no process waits.
template <class T>
[[nodiscard]] CsrRows<T> generate_rows(const GeneratorSpec& spec, MPI_Comm comm);

// Where the unknown `vertex` (a row of the generated, possibly permuted matrix) sits on the 2-D
// grid: (x, y). None for poisson3d, which has no picture. For drawing a mesh coloured by owner.
// With a permutation each call builds pi (O(N)): use grid_positions() for many vertices.
// Error(invalid_argument) when the vertex is not in [0, N).
[[nodiscard]] std::optional<std::pair<index_t, index_t>> grid_position(const GeneratorSpec& spec,
                                                                       index_t vertex);
// The grid position of every vertex 0..N-1 (empty for poisson3d), in one O(N) pass.
[[nodiscard]] std::vector<std::pair<index_t, index_t>> grid_positions(const GeneratorSpec& spec);

// b = A·1: the row sums of the rows held, in the order held (the default right-hand side, whose
// solution is x = 1, which makes a check independent of the solver).
template <class T>
[[nodiscard]] std::vector<T> rhs_ones_product(const CsrRows<T>& rows);

}  // namespace hit
