#pragma once
// hit-packages' clusterCL workloads: ten of the eleven applications of Raca and Mehofer's
// clusterCL suite (gemm is in hit-packages already), each as the kernels a work package runs over
// its rows. Plain C++17 shared by the cpu bodies (the *_rows functions below), the cuda bodies
// (clustercl_cuda.cu, nvcc) and the tests, so every device computes a row with the same code.
//
//   syrk     C = A·Aᵀ, lower triangle (the upper one is written 0)
//   gsmv     y = α·A·x + β·B·x
//   bicg     q = A·p and s = Aᵀ·r (BiCGStab's two products), s reduced over packages
//   bsm      Black–Scholes European call and put
//   bop      the same call on a Cox–Ross–Rubinstein binomial tree
//   dcs      direct Coulomb summation of a plane of grid points, split by grid rows (dcs_out) or
//            by atoms with the grid reduced over packages (dcs_in)
//   conv     a 3 × 3 filter over an image, zero outside it
//   cov      covariance of the columns of X (mean, then cov)
//   cor      Pearson correlation of the columns of X (mean_sd, then cor)
//   gsp      modified Gram–Schmidt by columns (gsp_dots reduced over packages, then gsp_update)
//
// Conventions of every function here:
//   * Views are indexed as hit::View says: rows by array (global) index. The workloads' layouts
//     split rows only, so every view holds whole rows: columns 0 .. cols()-1 and, for the
//     replicated and reduced arrays, rows 0 .. rows()-1 as well. Inner loops therefore address
//     columns (and replicated rows) by position, View::local, which is their index: a division
//     per element (operator()) would dominate the cuda bodies.
//   * "part" arrays hold the package's rows; "repl" ones the whole array; "reduced" outputs are a
//     whole array that is zero when the package starts and to which the kernel ADDS the
//     package's contribution.
//   * A kernel's rows are those of its block on the first axis (ctx.block: Box::begin[0],
//     step[0], extent(0)); the other axes of the block are not looked at.
//   * Sums run in T (the workload's precision), except where a comment says double.
//   * The cpu bodies that add into a reduced output (bicg_rows, dcs_in_rows, gsp_dots_rows) must
//     not run on two blocks of one launch at once: blocks would add into the same elements.

#include <math.h>

#include <memory>
#include <vector>

#include "hit/view.hpp"

namespace hit::packages {

// Array indices first, first + step, ... (count of them) on a first axis: a package's rows, or a
// chunk of them.
struct RowSpan {
  index_t first = 0;
  index_t step = 1;
  index_t count = 0;

  HIT_HOST_DEVICE index_t index(index_t t) const { return first + t * step; }
  // Rows t0 .. t0+n-1 of this span (fewer at its end).
  HIT_HOST_DEVICE RowSpan part(index_t t0, index_t n) const {
    const index_t left = count - t0;
    return {index(t0), step, left < 0 ? 0 : (left < n ? left : n)};
  }
};

HIT_HOST_DEVICE inline RowSpan rows_of(const Box& block) {
  return {block.begin[0], block.step[0] > 0 ? block.step[0] : 1, block.extent(0)};
}

namespace clustercl_detail {

HIT_HOST_DEVICE inline float root(float x) {
  return ::sqrtf(x);
}
HIT_HOST_DEVICE inline double root(double x) {
  return ::sqrt(x);
}

// Where the rows of a span lie in a view: position of the first, positions between two.
struct Walk {
  index_t pos = 0;
  index_t inc = 0;
};
template <class T>
HIT_HOST_DEVICE Walk walk(const View<T>& v, const RowSpan& rows) {
  if (rows.count == 0) return {};
  return {v.position(0, rows.first), rows.step / v.step[0]};
}

template <class F>
void for_rows(const Box& block, F&& f) {
  for (index_t r = 0; r < block.extent(0); ++r) f(block.begin[0] + r * block.step[0]);
}

}  // namespace clustercl_detail

// ==== syrk =======================================================================================
// A n × m (repl), C n × n (part out).

template <class T>
HIT_HOST_DEVICE T syrk_element(View<T> a, index_t i, index_t j) {
  if (j > i) return 0;
  const index_t m = a.cols();
  T sum = 0;
  for (index_t k = 0; k < m; ++k) sum += a.local(i, k) * a.local(j, k);
  return sum;
}

template <class T>
HIT_HOST_DEVICE void syrk_row(View<T> a, View<T> c, index_t i) {
  const index_t pc = c.position(0, i);
  for (index_t j = 0; j < c.cols(); ++j) c.local(pc, j) = syrk_element(a, i, j);
}

template <class T>
void syrk_rows(const Box& block, View<T> a, View<T> c) {
  clustercl_detail::for_rows(block, [&](index_t i) { syrk_row(a, c, i); });
}

// ==== gsmv =======================================================================================
// A, B n × n (part in), x n (repl), y n (part out).

template <class T>
HIT_HOST_DEVICE void gsmv_row(View<T> a, View<T> b, View<T> x, View<T> y, T alpha, T beta,
                              index_t i) {
  const index_t n = a.cols();
  const index_t pa = a.position(0, i);
  const index_t pb = b.position(0, i);
  T sa = 0;
  T sb = 0;
  for (index_t j = 0; j < n; ++j) {
    sa += a.local(pa, j) * x.local(j);
    sb += b.local(pb, j) * x.local(j);
  }
  y(i) = alpha * sa + beta * sb;
}

template <class T>
void gsmv_rows(const Box& block, View<T> a, View<T> b, View<T> x, View<T> y, T alpha, T beta) {
  clustercl_detail::for_rows(block, [&](index_t i) { gsmv_row(a, b, x, y, alpha, beta, i); });
}

// ==== bicg =======================================================================================
// A N × M (part in), p M (repl), r N (part in), q N (part out), s M (reduced out).

template <class T>
HIT_HOST_DEVICE void bicg_q_row(View<T> a, View<T> p, View<T> q, index_t i) {
  const index_t m = a.cols();
  const index_t pa = a.position(0, i);
  T sum = 0;
  for (index_t j = 0; j < m; ++j) sum += a.local(pa, j) * p.local(j);
  q(i) = sum;
}

// Row i's terms of s: s(j) += A(i, j)·r(i), every j.
template <class T>
HIT_HOST_DEVICE void bicg_s_row(View<T> a, View<T> r, View<T> s, index_t i) {
  const index_t m = a.cols();
  const index_t pa = a.position(0, i);
  const T ri = r(i);
  for (index_t j = 0; j < m; ++j) s.local(j) += a.local(pa, j) * ri;
}

// Σ A(i, j)·r(i) over the rows i of `rows`: one element of s from a chunk of rows, what a cuda
// thread adds (column by column, the threads of a warp read A coalesced).
template <class T>
HIT_HOST_DEVICE T bicg_s_part(View<T> a, View<T> r, index_t j, RowSpan rows) {
  const clustercl_detail::Walk wa = clustercl_detail::walk(a, rows);
  const clustercl_detail::Walk wr = clustercl_detail::walk(r, rows);
  T sum = 0;
  for (index_t t = 0; t < rows.count; ++t) {
    sum += a.local(wa.pos + t * wa.inc, j) * r.local(wr.pos + t * wr.inc);
  }
  return sum;
}

template <class T>
void bicg_rows(const Box& block, View<T> a, View<T> p, View<T> r, View<T> q, View<T> s) {
  clustercl_detail::for_rows(block, [&](index_t i) {
    bicg_q_row(a, p, q, i);
    bicg_s_row(a, r, s, i);
  });
}

// ==== bsm ========================================================================================
// S, K, T (years) N (part in), call and put N (part out); computed in double for both T.

struct OptionPrices {
  double call = 0;
  double put = 0;
};

// The standard normal distribution function.
HIT_HOST_DEVICE inline double normal_cdf(double x) {
  return 0.5 * ::erfc(-x * 0.70710678118654752);
}

// With σ√T = 0 (expiry now, T ≤ 0, or no volatility) the price is the discounted intrinsic value
// of the forward, max(S − K·e^{−rT}, 0): the formula's limit, where it would divide by zero.
HIT_HOST_DEVICE inline OptionPrices black_scholes(double s, double k, double t, double r,
                                                  double sigma) {
  const double years = t > 0 ? t : 0.0;
  const double strike = k * ::exp(-r * years);  // K e^{−rT}
  const double vol = sigma * ::sqrt(years);
  if (!(vol > 0)) return {s > strike ? s - strike : 0.0, strike > s ? strike - s : 0.0};
  const double d1 = (::log(s / k) + (r + 0.5 * sigma * sigma) * years) / vol;
  const double d2 = d1 - vol;
  return {s * normal_cdf(d1) - strike * normal_cdf(d2),
          strike * normal_cdf(-d2) - s * normal_cdf(-d1)};
}

template <class T>
HIT_HOST_DEVICE void bsm_row(View<T> s, View<T> k, View<T> t, View<T> call, View<T> put, T r,
                             T sigma, index_t i) {
  const OptionPrices p = black_scholes(s(i), k(i), t(i), r, sigma);
  call(i) = static_cast<T>(p.call);
  put(i) = static_cast<T>(p.put);
}

template <class T>
void bsm_rows(const Box& block, View<T> s, View<T> k, View<T> t, View<T> call, View<T> put, T r,
              T sigma) {
  clustercl_detail::for_rows(block, [&](index_t i) { bsm_row(s, k, t, call, put, r, sigma, i); });
}

// ==== bop ========================================================================================
// S, K, T N (part in), call N (part out); computed in double for both T. The backward induction
// keeps steps+1 values per option: the cuda body keeps them in a fixed array per thread, which
// caps the steps (the program refuses more).
inline constexpr int bop_max_steps = 4096;

// A European call on a CRR tree of `steps` steps (at least 1), backward induction in `v` (room
// for steps+1 values). As black_scholes, σ√T = 0 gives max(S − K·e^{−rT}, 0): the tree would
// divide by u − d = 0. p leaves [0, 1] (an arbitrage) when e^{rΔt} is outside [d, u], for steps
// too few for the rate; nothing checks it.
HIT_HOST_DEVICE inline double binomial_call(double s, double k, double t, double r, double sigma,
                                            int steps, double* v) {
  const double years = t > 0 ? t : 0.0;
  if (!(sigma * ::sqrt(years) > 0)) {
    const double strike = k * ::exp(-r * years);
    return s > strike ? s - strike : 0.0;
  }
  const int n = steps > 0 ? steps : 1;
  const double dt = years / n;
  const double up_log = sigma * ::sqrt(dt);
  const double u = ::exp(up_log);
  const double d = 1.0 / u;
  const double p = (::exp(r * dt) - d) / (u - d);
  const double disc = ::exp(-r * dt);
  for (int j = 0; j <= n; ++j) {
    // S·u^j·d^(n−j) by one exp: repeated products would drift over thousands of steps.
    const double payoff = s * ::exp(up_log * (2 * j - n)) - k;
    v[j] = payoff > 0 ? payoff : 0.0;
  }
  for (int level = n - 1; level >= 0; --level) {
    for (int j = 0; j <= level; ++j) v[j] = disc * (p * v[j + 1] + (1.0 - p) * v[j]);
  }
  return v[0];
}

template <class T>
HIT_HOST_DEVICE void bop_row(View<T> s, View<T> k, View<T> t, View<T> call, T r, T sigma, int steps,
                             index_t i, double* scratch) {
  call(i) = static_cast<T>(binomial_call(s(i), k(i), t(i), r, sigma, steps, scratch));
}

template <class T>
void bop_rows(const Box& block, View<T> s, View<T> k, View<T> t, View<T> call, T r, T sigma,
              int steps) {
  // The tree's values start on a cache line: where malloc happened to put them decided whether
  // the backward sweep's loads split lines, and the whole kernel took 0.24 or 0.31 s (bop, n =
  // 4000, 700 steps) from one build to the next.
  std::vector<double> scratch(static_cast<std::size_t>(steps > 0 ? steps : 1) + 1 + 8);
  void* at = scratch.data();
  std::size_t room = scratch.size() * sizeof(double);
  double* v = static_cast<double*>(std::align(64, sizeof(double), at, room));
  clustercl_detail::for_rows(block,
                             [&](index_t i) { bop_row(s, k, t, call, r, sigma, steps, i, v); });
}

// ==== dcs ========================================================================================
// Atoms N × 4 (x, y, z, q); grid nx × ny, point (i, j) at (i·h, j·h, z0); E(i, j) = Σ q/r.
// An atom exactly on a grid point (distance 0) is skipped for that point: its potential there is
// infinite, and one such point would otherwise make the whole sum inf or NaN.

// The potential at (x, y, z) of the atoms in `rows`.
template <class T>
HIT_HOST_DEVICE T dcs_point(View<T> atoms, RowSpan rows, T x, T y, T z) {
  const clustercl_detail::Walk w = clustercl_detail::walk(atoms, rows);
  T sum = 0;
  for (index_t t = 0; t < rows.count; ++t) {
    const index_t p = w.pos + t * w.inc;
    const T dx = x - atoms.local(p, 0);
    const T dy = y - atoms.local(p, 1);
    const T dz = z - atoms.local(p, 2);
    const T r2 = dx * dx + dy * dy + dz * dz;
    if (r2 > 0) sum += atoms.local(p, 3) / clustercl_detail::root(r2);
  }
  return sum;
}

// dcs_out: atoms (repl), grid (part out): grid row i from every atom.
template <class T>
HIT_HOST_DEVICE void dcs_out_row(View<T> atoms, View<T> grid, T h, T z0, index_t i) {
  const RowSpan all{0, 1, atoms.rows()};
  const index_t pg = grid.position(0, i);
  const T x = static_cast<T>(i) * h;
  for (index_t j = 0; j < grid.cols(); ++j) {
    grid.local(pg, j) = dcs_point(atoms, all, x, static_cast<T>(j) * h, z0);
  }
}

// dcs_in: atoms (part in), grid (reduced out, whole): atom row k adds its potential to every
// grid point.
template <class T>
HIT_HOST_DEVICE void dcs_in_row(View<T> atoms, View<T> grid, T h, T z0, index_t k) {
  const index_t pa = atoms.position(0, k);
  const T ax = atoms.local(pa, 0);
  const T ay = atoms.local(pa, 1);
  const T az = atoms.local(pa, 2);
  const T q = atoms.local(pa, 3);
  const T dz = z0 - az;
  for (index_t i = 0; i < grid.rows(); ++i) {
    const T dx = static_cast<T>(i) * h - ax;
    for (index_t j = 0; j < grid.cols(); ++j) {
      const T dy = static_cast<T>(j) * h - ay;
      const T r2 = dx * dx + dy * dy + dz * dz;
      if (r2 > 0) grid.local(i, j) += q / clustercl_detail::root(r2);
    }
  }
}

template <class T>
void dcs_out_rows(const Box& block, View<T> atoms, View<T> grid, T h, T z0) {
  clustercl_detail::for_rows(block, [&](index_t i) { dcs_out_row(atoms, grid, h, z0, i); });
}

template <class T>
void dcs_in_rows(const Box& block, View<T> atoms, View<T> grid, T h, T z0) {
  clustercl_detail::for_rows(block, [&](index_t k) { dcs_in_row(atoms, grid, h, z0, k); });
}

// ==== conv =======================================================================================
// in n × m (part in, with the rows above and below the package where the image has them), W 3 × 3
// (repl), out n × m (part out). rows_total × cols_total is the image: neighbours outside it count
// 0, so the view need not hold them.

template <class T>
HIT_HOST_DEVICE T conv_point(View<T> in, View<T> w, index_t rows_total, index_t cols_total,
                             index_t i, index_t j) {
  T sum = 0;
  for (index_t a = 0; a < 3; ++a) {
    const index_t ii = i + a - 1;
    if (ii < 0 || ii >= rows_total) continue;
    const index_t pi = in.position(0, ii);
    for (index_t b = 0; b < 3; ++b) {
      const index_t jj = j + b - 1;
      if (jj >= 0 && jj < cols_total) sum += w.local(a, b) * in.local(pi, jj);
    }
  }
  return sum;
}

template <class T>
HIT_HOST_DEVICE void conv_row(View<T> in, View<T> w, View<T> out, index_t rows_total,
                              index_t cols_total, index_t i) {
  const index_t po = out.position(0, i);
  for (index_t j = 0; j < cols_total; ++j) {
    out.local(po, j) = conv_point(in, w, rows_total, cols_total, i, j);
  }
}

template <class T>
void conv_rows(const Box& block, View<T> in, View<T> w, View<T> out, index_t rows_total,
               index_t cols_total) {
  clustercl_detail::for_rows(block,
                             [&](index_t i) { conv_row(in, w, out, rows_total, cols_total, i); });
}

// ==== cov ========================================================================================
// X N × M (repl). mean: rows are X's columns, mean M (part out). cov: mean (repl), cov M × M (part
// out), sample covariance (divided by N − 1; by 1 when N = 1, where every deviation is 0).
// Means are summed in double: they are O(N·M) of the O(N·M²) work.

template <class T>
HIT_HOST_DEVICE void mean_row(View<T> x, View<T> mean, index_t j) {
  const index_t n = x.rows();
  double sum = 0;
  for (index_t k = 0; k < n; ++k) sum += static_cast<double>(x.local(k, j));
  mean(j) = static_cast<T>(n > 0 ? sum / static_cast<double>(n) : 0.0);
}

template <class T>
HIT_HOST_DEVICE T cov_element(View<T> x, View<T> mean, index_t i, index_t j) {
  const index_t n = x.rows();
  const T mi = mean.local(i);
  const T mj = mean.local(j);
  T sum = 0;
  for (index_t k = 0; k < n; ++k) sum += (x.local(k, i) - mi) * (x.local(k, j) - mj);
  return sum / static_cast<T>(n > 1 ? n - 1 : 1);
}

template <class T>
HIT_HOST_DEVICE void cov_row(View<T> x, View<T> mean, View<T> cov, index_t i) {
  const index_t pc = cov.position(0, i);
  for (index_t j = 0; j < x.cols(); ++j) cov.local(pc, j) = cov_element(x, mean, i, j);
}

template <class T>
void mean_rows(const Box& block, View<T> x, View<T> mean) {
  clustercl_detail::for_rows(block, [&](index_t j) { mean_row(x, mean, j); });
}

template <class T>
void cov_rows(const Box& block, View<T> x, View<T> mean, View<T> cov) {
  clustercl_detail::for_rows(block, [&](index_t i) { cov_row(x, mean, cov, i); });
}

// ==== cor ========================================================================================
// X N × M (repl). mean_sd: mean and sd M (part out); sd is the SAMPLE standard deviation
// (N − 1, as cov's; 0 when N = 1). cor: mean, sd (repl), cor M × M (part out).
//
// Zero variance: mean_sd stores sd(j) = 0 exactly when sd(j) ≤ cor_zero_sd · max_k |X(k, j)|, so
// a constant column's rounding noise (of its mean) counts as no variance at all; cor then gives
// such a column 0 with every other column and 1 with itself. The diagonal is 1 for every column.
// mean and sd are computed in double (two passes), for both T.
inline constexpr double cor_zero_sd = 1e-12;

template <class T>
HIT_HOST_DEVICE void mean_sd_row(View<T> x, View<T> mean, View<T> sd, index_t j) {
  const index_t n = x.rows();
  double sum = 0;
  double scale = 0;
  for (index_t k = 0; k < n; ++k) {
    const double v = static_cast<double>(x.local(k, j));
    sum += v;
    scale = ::fabs(v) > scale ? ::fabs(v) : scale;
  }
  const double mu = n > 0 ? sum / static_cast<double>(n) : 0.0;
  double squares = 0;
  for (index_t k = 0; k < n; ++k) {
    const double dev = static_cast<double>(x.local(k, j)) - mu;
    squares += dev * dev;
  }
  double sigma = n > 1 ? ::sqrt(squares / static_cast<double>(n - 1)) : 0.0;
  if (sigma <= cor_zero_sd * scale) sigma = 0;
  mean(j) = static_cast<T>(mu);
  sd(j) = static_cast<T>(sigma);
}

template <class T>
HIT_HOST_DEVICE T cor_element(View<T> x, View<T> mean, View<T> sd, index_t i, index_t j) {
  if (i == j) return 1;
  const T si = sd.local(i);
  const T sj = sd.local(j);
  if (si == 0 || sj == 0) return 0;
  const index_t n = x.rows();
  const T mi = mean.local(i);
  const T mj = mean.local(j);
  T sum = 0;
  for (index_t k = 0; k < n; ++k) sum += (x.local(k, i) - mi) * (x.local(k, j) - mj);
  // In double: sd(i)·sd(j) of small floats would underflow. n ≥ 2 here (sd is 0 for n = 1).
  return static_cast<T>(
      static_cast<double>(sum) /
      (static_cast<double>(n - 1) * static_cast<double>(si) * static_cast<double>(sj)));
}

template <class T>
HIT_HOST_DEVICE void cor_row(View<T> x, View<T> mean, View<T> sd, View<T> cor, index_t i) {
  const index_t pc = cor.position(0, i);
  for (index_t j = 0; j < x.cols(); ++j) cor.local(pc, j) = cor_element(x, mean, sd, i, j);
}

template <class T>
void mean_sd_rows(const Box& block, View<T> x, View<T> mean, View<T> sd) {
  clustercl_detail::for_rows(block, [&](index_t j) { mean_sd_row(x, mean, sd, j); });
}

template <class T>
void cor_rows(const Box& block, View<T> x, View<T> mean, View<T> sd, View<T> cor) {
  clustercl_detail::for_rows(block, [&](index_t i) { cor_row(x, mean, sd, cor, i); });
}

// ==== gsp ========================================================================================
// Modified Gram–Schmidt of A (m × n, m ≥ n), column k at a time, over rows of A. gsp_dots: A (part
// in), d n (reduced out): d(j) += Σ_rows A(r, k)·A(r, j) for j ≥ k. The host then forms row k of R:
// R(k, k) = √d(k), R(k, j) = d(j)/R(k, k). gsp_update: A (part in), rk n (repl: row k of R), A2
// (part out): column k normalised, the later ones less their component along it. After columns
// 0 .. n-1, A holds Q.

template <class T>
HIT_HOST_DEVICE void gsp_dots_row(View<T> a, View<T> d, index_t k, index_t r) {
  const index_t n = a.cols();
  const index_t pa = a.position(0, r);
  const T ak = a.local(pa, k);
  for (index_t j = k; j < n; ++j) d.local(j) += ak * a.local(pa, j);
}

// Σ A(r, k)·A(r, j) over the rows r of `rows`: one element of d from a chunk of rows (cuda).
template <class T>
HIT_HOST_DEVICE T gsp_dots_part(View<T> a, index_t k, index_t j, RowSpan rows) {
  const clustercl_detail::Walk w = clustercl_detail::walk(a, rows);
  T sum = 0;
  for (index_t t = 0; t < rows.count; ++t) {
    const index_t p = w.pos + t * w.inc;
    sum += a.local(p, k) * a.local(p, j);
  }
  return sum;
}

// A2(r, j). a and a2 may be the same view in gsp_update_row, which reads A(r, k) first.
template <class T>
HIT_HOST_DEVICE T gsp_update_element(View<T> a, View<T> rk, index_t k, index_t r, index_t j) {
  const index_t pa = a.position(0, r);
  const T v = a.local(pa, j);
  if (j < k) return v;
  const T q = a.local(pa, k) / rk.local(k);
  return j == k ? q : v - q * rk.local(j);
}

template <class T>
HIT_HOST_DEVICE void gsp_update_row(View<T> a, View<T> rk, View<T> a2, index_t k, index_t r) {
  const index_t n = a.cols();
  const index_t pa = a.position(0, r);
  const index_t p2 = a2.position(0, r);
  const T q = a.local(pa, k) / rk.local(k);
  for (index_t j = 0; j < n; ++j) {
    const T v = a.local(pa, j);
    a2.local(p2, j) = j < k ? v : (j == k ? q : v - q * rk.local(j));
  }
}

template <class T>
void gsp_dots_rows(const Box& block, View<T> a, View<T> d, index_t k) {
  clustercl_detail::for_rows(block, [&](index_t r) { gsp_dots_row(a, d, k, r); });
}

template <class T>
void gsp_update_rows(const Box& block, View<T> a, View<T> rk, View<T> a2, index_t k) {
  clustercl_detail::for_rows(block, [&](index_t r) { gsp_update_row(a, rk, a2, k, r); });
}

// ==== the cuda bodies (clustercl_cuda.cu) ========================================================
// Each launches on ctx.cuda_stream over the rows of ctx.block; the reduced outputs get the
// package's contribution added.

void syrk_cuda(const KernelContext& ctx, View<double> a, View<double> c);
void syrk_cuda(const KernelContext& ctx, View<float> a, View<float> c);

void gsmv_cuda(const KernelContext& ctx, View<double> a, View<double> b, View<double> x,
               View<double> y, double alpha, double beta);
void gsmv_cuda(const KernelContext& ctx, View<float> a, View<float> b, View<float> x, View<float> y,
               float alpha, float beta);

void bicg_cuda(const KernelContext& ctx, View<double> a, View<double> p, View<double> r,
               View<double> q, View<double> s);
void bicg_cuda(const KernelContext& ctx, View<float> a, View<float> p, View<float> r, View<float> q,
               View<float> s);

void bsm_cuda(const KernelContext& ctx, View<double> s, View<double> k, View<double> t,
              View<double> call, View<double> put, double r, double sigma);
void bsm_cuda(const KernelContext& ctx, View<float> s, View<float> k, View<float> t,
              View<float> call, View<float> put, float r, float sigma);

// steps must be 1 .. bop_max_steps.
void bop_cuda(const KernelContext& ctx, View<double> s, View<double> k, View<double> t,
              View<double> call, double r, double sigma, int steps);
void bop_cuda(const KernelContext& ctx, View<float> s, View<float> k, View<float> t,
              View<float> call, float r, float sigma, int steps);

void dcs_out_cuda(const KernelContext& ctx, View<double> atoms, View<double> grid, double h,
                  double z0);
void dcs_out_cuda(const KernelContext& ctx, View<float> atoms, View<float> grid, float h, float z0);
void dcs_in_cuda(const KernelContext& ctx, View<double> atoms, View<double> grid, double h,
                 double z0);
void dcs_in_cuda(const KernelContext& ctx, View<float> atoms, View<float> grid, float h, float z0);

void conv_cuda(const KernelContext& ctx, View<double> in, View<double> w, View<double> out,
               index_t rows_total, index_t cols_total);
void conv_cuda(const KernelContext& ctx, View<float> in, View<float> w, View<float> out,
               index_t rows_total, index_t cols_total);

void mean_cuda(const KernelContext& ctx, View<double> x, View<double> mean);
void mean_cuda(const KernelContext& ctx, View<float> x, View<float> mean);
void cov_cuda(const KernelContext& ctx, View<double> x, View<double> mean, View<double> cov);
void cov_cuda(const KernelContext& ctx, View<float> x, View<float> mean, View<float> cov);

void mean_sd_cuda(const KernelContext& ctx, View<double> x, View<double> mean, View<double> sd);
void mean_sd_cuda(const KernelContext& ctx, View<float> x, View<float> mean, View<float> sd);
void cor_cuda(const KernelContext& ctx, View<double> x, View<double> mean, View<double> sd,
              View<double> cor);
void cor_cuda(const KernelContext& ctx, View<float> x, View<float> mean, View<float> sd,
              View<float> cor);

void gsp_dots_cuda(const KernelContext& ctx, View<double> a, View<double> d, index_t k);
void gsp_dots_cuda(const KernelContext& ctx, View<float> a, View<float> d, index_t k);
void gsp_update_cuda(const KernelContext& ctx, View<double> a, View<double> rk, View<double> a2,
                     index_t k);
void gsp_update_cuda(const KernelContext& ctx, View<float> a, View<float> rk, View<float> a2,
                     index_t k);

}  // namespace hit::packages
