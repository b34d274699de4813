#pragma once
// The "block rows" distribution in which matrices are read and generated: process p of P holds
// rows [first, last) with the first N mod P processes one row more. It is hit::block_range of
// hit/layout.hpp, restated here because the readers sit in a lower layer than the layouts.

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "hit/core/error.hpp"
#include "hit/shape.hpp"

namespace hit::detail {

inline std::pair<index_t, index_t> block_rows(index_t n, int parts, int part) {
  const index_t base = n / parts;
  const index_t extra = n % parts;
  const index_t first = part * base + std::min<index_t>(part, extra);
  return {first, first + base + (part < extra ? 1 : 0)};
}

inline std::pair<index_t, index_t> block_rows(index_t n, MPI_Comm comm) {
  int size = 1;
  int rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  return block_rows(n, size, rank);
}

// The process whose block holds `row` (0 <= row < n): the inverse of block_rows, in O(1).
inline int block_owner(index_t n, int parts, index_t row) {
  const index_t base = n / parts;
  const index_t extra = n % parts;
  const index_t wide = extra * (base + 1);  // rows of the processes with one row more
  if (row < wide) return static_cast<int>(row / (base + 1));
  return static_cast<int>(extra + (row - wide) / base);
}

// A floor of the bytes a block of `rows` rows and `entries` entries allocates before it is
// read or generated: a name and a row offset per row, a column and a value per entry. Floating
// point, so that the figures of a file or spec far beyond any host do not overflow.
inline double block_rows_bytes(double rows, double entries, std::size_t value_bytes) {
  return rows * 16 + entries * static_cast<double>(sizeof(index_t) + value_bytes);
}

}  // namespace hit::detail
