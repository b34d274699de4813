#pragma once
// The unit of the spmv launch kernel (launch_kernels.cpp): one row of the CSR product y = A·x of
// the 7-point Laplacian of a K×K×∞ grid (K = spmv_plane = 64), numbered as hit-cg's
// poisson3d:n=64 numbers it: row u is the grid point x = u mod K, y = (u / K) mod K, z = u / K²,
// with 6 on the diagonal and −1 at (x±1, y, z), (x, y±1, z) inside the K×K plane, (x, y, z−1)
// when z > 0, and (x, y, z+1) always (the grid is unbounded above, so any d rows exist; for
// d <= K³ − K² the rows are exactly the first d rows of poisson3d:n=64). The d rows reference the
// columns 0 .. d + K² − 1: x is over those, in the CSR arrays' local numbering (the identity).

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "hit/core/error.hpp"
#include "hit/shape.hpp"
#include "hit/sparse/csr_shape.hpp"
#include "hit/tile.hpp"

namespace hit::balance::detail {

inline constexpr std::int64_t spmv_plane = 64;  // K: the grid is K×K in each plane

// The most rows of one benchmark: x's d + K² columns must have local (32-bit) indices.
inline constexpr std::int64_t spmv_max_rows =
    std::int64_t{std::numeric_limits<local_index_t>::max()} - spmv_plane * spmv_plane;

// The nonzeros of the first d rows (closed form; the kernel does 2 flops per nonzero).
inline std::int64_t spmv_nonzeros(std::int64_t d) {
  constexpr std::int64_t k = spmv_plane;
  constexpr std::int64_t plane = k * k;
  if (d <= 0) return 0;
  // Neighbours along one axis of the first r <= K points of a line: [i > 0] + [i < K−1].
  const auto line = [](std::int64_t r) {
    return std::max<std::int64_t>(r - 1, 0) + std::min(r, k - 1);
  };
  std::int64_t nnz = 2 * d + std::max<std::int64_t>(d - plane, 0);  // diagonal, z+1, z−1
  nnz += (d / k) * 2 * (k - 1) + line(d % k);                       // x±1
  const std::int64_t rest = d % plane;                              // y±1
  const std::int64_t last_line = rest / k;
  nnz += (d / plane) * 2 * k * (k - 1) + k * line(last_line) +
         (rest % k) * (static_cast<std::int64_t>(last_line > 0) +
                       static_cast<std::int64_t>(last_line < k - 1));
  return nnz;
}

// 2 flops (a multiply and an add) per nonzero: 14 for a row inside the grid, 13.875 per row on
// average over a whole plane above the first.
inline double spmv_flops(std::int64_t d) {
  return 2.0 * static_cast<double>(spmv_nonzeros(d));
}

// The CSR arrays of the first d rows, as the sparse kernels take them (1-D tiles from 0).
struct SpmvRows {
  Tile<index_t> row_ptr;     // d + 1
  Tile<local_index_t> cols;  // nonzeros
  Tile<double> values;       // nonzeros
};

inline SpmvRows spmv_rows(std::int64_t d) {
  constexpr std::int64_t k = spmv_plane;
  constexpr std::int64_t plane = k * k;
  const std::int64_t nnz = spmv_nonzeros(d);
  SpmvRows r{Tile<index_t>(Shape{Sig(0, d + 1)}), Tile<local_index_t>(Shape{Sig(0, nnz)}),
             Tile<double>(Shape{Sig(0, nnz)})};
  index_t at = 0;
  const auto put = [&](std::int64_t col, double v) {
    r.cols(at) = static_cast<local_index_t>(col);
    r.values(at) = v;
    ++at;
  };
  for (std::int64_t u = 0; u < d; ++u) {
    r.row_ptr(u) = at;
    const std::int64_t x = u % k;
    const std::int64_t y = (u / k) % k;
    const std::int64_t z = u / plane;
    if (z > 0) put(u - plane, -1.0);
    if (y > 0) put(u - k, -1.0);
    if (x > 0) put(u - 1, -1.0);
    put(u, 6.0);
    if (x < k - 1) put(u + 1, -1.0);
    if (y < k - 1) put(u + k, -1.0);
    put(u + plane, -1.0);
  }
  r.row_ptr(d) = at;
  if (at != nnz) {
    throw Error(ErrorKind::internal,
                fmt::format("spmv kernel: {} nonzeros in {} rows, the count says {}", at, d, nnz));
  }
  return r;
}

}  // namespace hit::balance::detail
