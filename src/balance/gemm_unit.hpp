#pragma once
// The unit of the gemm benchmark kernels (FuPerMod §4.1), shared by the host kernel
// (kernels.cpp) and the launch kernel (launch_kernels.cpp): one unit is the update of one b×b block
// of C, and d units are arranged as a nearly square rectangle of blocks plus a partial row.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "hit/core/error.hpp"

namespace hit::balance::detail {

// Error(invalid_argument) unless 1 <= block <= 4096.
inline void check_gemm_block(int block) {
  if (block < 1 || block > 4096) {
    throw Error(ErrorKind::invalid_argument,
                fmt::format("gemm kernel: block size {} (allowed 1 to 4096)", block));
  }
}

inline std::string gemm_name(int block) {
  return fmt::format("gemm(b={})", block);
}

// 2·b³ flops per unit.
inline double gemm_flops(int block, std::int64_t d) {
  const auto b = static_cast<double>(block);
  return 2.0 * static_cast<double>(d) * b * b * b;
}

struct GemmGeometry {
  std::int64_t rows = 0;       // block rows of the main rectangle: floor(sqrt(d)), at least 1
  std::int64_t cols = 0;       // block columns of the main rectangle
  std::int64_t remainder = 0;  // blocks of the extra partial row
};

inline GemmGeometry gemm_geometry(std::int64_t d) {
  GemmGeometry g;
  g.rows = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::floor(std::sqrt(static_cast<double>(d)))));
  while (g.rows * g.rows > d && g.rows > 1) --g.rows;  // floating-point sqrt of large d
  g.cols = d / g.rows;
  g.remainder = d - g.rows * g.cols;
  return g;
}

}  // namespace hit::balance::detail
