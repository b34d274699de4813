#pragma once
// Everything of hit-cholesky around the algorithm (cholesky.cpp): the tiling a layout gives, the
// input matrix (generated or read), the --check of the factor, the result file and the report.

#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../common/harness.hpp"
#include "cholesky.hpp"
#include "hit/hit.hpp"

namespace hit::cholesky {

// The tiles of the factorisation: the matrix cut, on both axes, wherever a block of the layout
// begins on either axis. Every tile then lies inside one block (the cuts refine the blocks), and
// the tiling is symmetric, as the factorisation needs.
class Tiling {
 public:
  explicit Tiling(const Layout& lay) {
    const index_t n = lay.shape().extent(0);
    cuts_ = {0, n};
    for (int p = 0; p < lay.topology().grid_size(); ++p) {
      for (const Shape& b : lay.blocks(p)) {
        for (int axis = 0; axis < 2; ++axis) {
          cuts_.push_back(b[axis].begin());
          cuts_.push_back(b[axis].end());
        }
      }
    }
    std::sort(cuts_.begin(), cuts_.end());
    cuts_.erase(std::unique(cuts_.begin(), cuts_.end()), cuts_.end());
    if (n == 0) cuts_ = {0};
  }
  int count() const noexcept { return static_cast<int>(cuts_.size()) - 1; }
  Sig range(int i) const { return Sig(cuts_[static_cast<std::size_t>(i)], cut(i + 1)); }
  index_t width(int i) const { return cut(i + 1) - cut(i); }
  index_t cut(int i) const { return cuts_[static_cast<std::size_t>(i)]; }
  const std::vector<index_t>& cuts() const noexcept { return cuts_; }
  Shape tile(int i, int j) const { return Shape{range(i), range(j)}; }
  // The rows below the diagonal tile k, in its columns.
  Shape panel(int k) const { return Shape{Sig(cut(k + 1), cuts_.back()), range(k)}; }
  index_t max_width() const {
    index_t w = 0;
    for (int i = 0; i < count(); ++i) w = std::max(w, width(i));
    return w;
  }

 private:
  std::vector<index_t> cuts_;
};

// The tiles of a layout of contiguous blocks only (a cyclic layout's strided blocks are not
// tiles), on a 2-D square matrix. Also draws the layout (--svg, unless --runtime draws its
// tasks instead). The same on every rank.
inline void check_and_draw(Environment& env, const Options& o, const Layout& lay) {
  app::require_contiguous_blocks(lay, "hit-cholesky");
  collectively(env.comm(), [&] {
    if (env.rank() != 0) return;
    if (!o.c_out.empty()) check_output_array(o.c_out, "L (--c-out)");
    if (!o.run.svg.empty() && o.runtime) check_output_path(o.run.svg, "the timeline (--svg)");
    if (!o.run.svg.empty() && !o.runtime)
      write_file_atomically(o.run.svg, layout_svg(lay, "A (" + lay.spec() + ")"));
  });
}

// The generated input: symmetric, entries in [-1, 1) from (seed, global index), plus n on the
// diagonal, which makes it diagonally dominant and so positive definite.
template <class T>
T generated(std::uint64_t seed, index_t i, index_t j, index_t n) {
  const auto lo = static_cast<std::uint64_t>(std::min(i, j));
  const auto hi = static_cast<std::uint64_t>(std::max(i, j));
  return static_cast<T>(app::hashed_value(seed, lo, hi) + (i == j ? static_cast<double>(n) : 0.0));
}

template <class T>
void load_input(Environment& env, const Options& o, const Shape& whole,
                std::vector<Tile<T>>& tiles) {
  if (!o.a_file.empty()) {
    hit::read(o.a_file, whole, tiles, env.comm());
    // LAPACK's potrf takes a NaN pivot as positive: a NaN would be factorised, and written.
    check_finite(o.a_file, whole, tiles, env.comm(), "A (--a)");
    return;
  }
  for (Tile<T>& t : tiles) {
    t.for_each([&](const Index& i, T& v) { v = generated<T>(o.run.seed, i[0], i[1], o.n); });
  }
}

// ‖A − L·Lᵀ‖_F / ‖A‖_F with A's lower triangle taken as the symmetric matrix, on rank 0 from L
// gathered there (one BLAS syrk, independent of the tile kernels); passed when the error is at
// most 30·n·ε (LAPACK's test threshold for factorisations). Collective.
template <class T>
app::CheckResult verify(Environment& env, const Options& o, const Layout& lay,
                        std::vector<Tile<T>>& factor) {
  app::CheckResult check;
  check.ran = true;
  const bool root = env.rank() == 0;
  const Shape whole = lay.shape();
  Tile<T> l = root ? Tile<T>(whole) : Tile<T>();
  Tile<T> a = root ? Tile<T>(whole) : Tile<T>();
  gather(lay, factor, 0, l).run();
  if (!o.a_file.empty()) {
    hit::read(o.a_file, whole, a, env.comm());
  } else if (root) {
    a.for_each([&](const Index& i, T& v) { v = generated<T>(o.run.seed, i[0], i[1], o.n); });
  }
  double ratio = 0;
  double rel = 0;
  if (root) {
    const auto n = static_cast<std::size_t>(o.n);
    std::vector<double> ld(n * n), prod(n * n, 0.0);
    const std::vector<T> lv = l.to_vector();
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j <= i; ++j) ld[i * n + j] = static_cast<double>(lv[i * n + j]);
    }
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                1.0, ld.data(), static_cast<int>(n), 0.0, prod.data(), static_cast<int>(n));
    const std::vector<T> av = a.to_vector();
    double diff = 0;
    double norm = 0;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        const double w = i == j ? 1.0 : 2.0;  // the upper triangle mirrors the lower one
        const double x = static_cast<double>(av[i * n + j]);
        const double d = x - prod[i * n + j];
        diff += w * d * d;
        norm += w * x * x;
      }
    }
    rel = std::sqrt(diff) / std::max(std::sqrt(norm), std::numeric_limits<double>::min());
    if (std::isnan(rel)) rel = std::numeric_limits<double>::infinity();
    ratio = rel / (static_cast<double>(n) * std::numeric_limits<T>::epsilon());
  }
  broadcast(rel, 0, env.comm());
  broadcast(ratio, 0, env.comm());
  check.max_rel_error = rel;
  check.passed = ratio <= 30.0;
  char line[160];
  std::snprintf(line, sizeof line, "%s (|A - L*L^T|_F / |A|_F = %.3g, %.3g n eps)",
                check.passed ? "passed" : "FAILED", rel, ratio);
  check.summary = line;
  return check;
}

// L without what lies above the diagonal (the factorisation leaves A's values there).
template <class T>
void clear_upper(std::vector<Tile<T>>& tiles) {
  for (Tile<T>& t : tiles) {
    t.for_each([](const Index& i, T& v) {
      if (i[1] > i[0]) v = T(0);
    });
  }
}

}  // namespace hit::cholesky
