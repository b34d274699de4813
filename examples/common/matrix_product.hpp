#pragma once
// What the matrix-product examples (hit-cannon, hit-summa) share around their algorithms: the
// input matrices (generated from a seed and the global index, or read from raw files), the serial
// reference of --check and its verdict. Header-only: examples/common is not a program.

#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "app.hpp"
#include "hit/hit.hpp"

namespace hit::app {

// C = A·B with A n×m and B m×k; the files (empty: generated from `seed`, `seed + 1`).
struct ProductInputs {
  long n = 0;
  long m = 0;
  long k = 0;
  std::string a_file;
  std::string b_file;
  std::uint64_t seed = 1;
};

template <class T>
void fill_generated(Tile<T>& tile, std::uint64_t seed) {
  tile.for_each([&](const Index& i, T& v) {
    v = static_cast<T>(app::hashed_value(seed, static_cast<std::uint64_t>(i[0]),
                                         static_cast<std::uint64_t>(i[1])));
  });
}

template <class T>
void load_matrix(Environment& env, const std::string& file, const Shape& whole, Tile<T>& tile,
                 std::uint64_t seed) {
  if (!file.empty()) {
    read_raw(file, whole, tile, env.comm());
  } else {
    fill_generated(tile, seed);
  }
}

// The serial reference of --check: one BLAS call on rank 0, independent of the device layer.
template <class T>
void serial_product(const Tile<T>& a, const Tile<T>& b, Tile<T>& c) {
  const auto rows = static_cast<int>(c.shape().extent(0));
  const auto cols = static_cast<int>(c.shape().extent(1));
  const auto inner = static_cast<int>(a.shape().extent(1));
  if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cols, inner, 1.0, a.data(),
                static_cast<int>(a.step(0)), b.data(), static_cast<int>(b.step(0)), 0.0, c.data(),
                static_cast<int>(c.step(0)));
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, cols, inner, 1.0f, a.data(),
                static_cast<int>(a.step(0)), b.data(), static_cast<int>(b.step(0)), 0.0f, c.data(),
                static_cast<int>(c.step(0)));
  }
}

// C gathered on rank 0 against the serial product of the same inputs (the generated ones, or
// the files).
template <class T>
CheckResult verify_product(Environment& env, const ProductInputs& o, const Layout& lc, Tile<T>& c) {
  CheckResult check;
  check.ran = true;
  const bool root = env.rank() == 0;
  const Shape sa = Shape::extents({o.n, o.m});
  const Shape sb = Shape::extents({o.m, o.k});
  Tile<T> whole_a = root ? Tile<T>(sa) : Tile<T>();
  Tile<T> whole_b = root ? Tile<T>(sb) : Tile<T>();
  Tile<T> whole_c = root ? Tile<T>(lc.shape()) : Tile<T>();
  load_matrix(env, o.a_file, sa, whole_a, o.seed);
  load_matrix(env, o.b_file, sb, whole_b, o.seed + 1);
  gather(lc, c, 0, whole_c).run();
  double err = 0;
  if (root) {
    Tile<T> ref(lc.shape());
    serial_product(whole_a, whole_b, ref);
    double scale = 0;
    double diff = 0;
    const std::vector<T> got = whole_c.to_vector();
    const std::vector<T> want = ref.to_vector();
    for (std::size_t i = 0; i < want.size(); ++i) {
      scale = std::max(scale, std::abs(static_cast<double>(want[i])));
      const double d = std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
      diff = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(diff, d);
    }
    err = diff / std::max(scale, std::numeric_limits<double>::min());
  }
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, env.comm());
  const double tolerance = std::is_same_v<T, double> ? 1e-10 : 1e-4;
  check.max_rel_error = err;
  check.passed = err <= tolerance;
  char line[128];
  std::snprintf(line, sizeof line, "%s (max relative error %.3g)",
                check.passed ? "passed" : "FAILED", err);
  check.summary = line;
  return check;
}

}  // namespace hit::app
