#pragma once
// hit-qr --check: on rank 0, from A, Q and R gathered there (BLAS products in double,
// independent of the tile kernels), ‖A − Q·R‖_F / ‖A‖_F and ‖QᵀQ − I‖_F, each passed at most 30
// m·ε (LAPACK's test threshold for QR); with a right-hand side, the least-squares optimality
// ‖Aᵀ(A·x − b)‖, passed at most 30 m·ε·‖A‖_F·(‖A‖_F‖x‖ + ‖b‖) (the backward error a stable
// solve leaves), and reported as the normal-equations residual ‖Aᵀ(A·x − b)‖ / (‖A‖ ‖A·x − b‖).

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../common/harness.hpp"
#include "hit/hit.hpp"
#include "qr.hpp"

namespace hit::qr {

// A distributed array's parts summed into one dense array of `whole` on rank 0 (each element is
// in one part); in double. Collective.
template <class T>
std::vector<double> on_root(const Shape& whole, const std::vector<Tile<T>>& parts) {
  Tile<double> dense(whole);
  dense.for_each([](const Index&, double& v) { v = 0; });
  for (const Tile<T>& p : parts) {
    if (p.is_null()) continue;
    p.for_each([&](const Index& i, const T& v) { dense(i) = static_cast<double>(v); });
  }
  reduce(dense, ReduceOp::sum, 0);
  return Environment::current().rank() == 0 ? dense.to_vector() : std::vector<double>{};
}

inline double norm(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x * x;
  return std::sqrt(s);
}

template <class T>
app::CheckResult verify(Environment& env, const Options& o, const Layout& lay,
                        std::vector<Tile<T>>& input, const std::vector<Tile<T>>& r,
                        std::vector<Tile<T>>& q, const std::vector<Tile<T>>& rhs,
                        const std::vector<Tile<T>>& x) {
  const auto m = static_cast<int>(o.rows());
  const auto n = static_cast<int>(o.n);
  const std::vector<double> a = on_root(lay.shape(), input);
  const std::vector<double> qd = on_root(lay.shape(), q);
  const std::vector<double> rd = on_root(Shape::extents({n, n}), r);
  const bool solve = !o.rhs_file.empty();
  std::vector<double> b, xd;
  if (solve) {
    // b's tiles are columns [n, n + 1) of their tile rows: as a 1-D array of m.
    std::vector<Tile<T>> flat;
    for (const Tile<T>& t : rhs) {
      if (t.is_null()) continue;
      Tile<T> f(Shape{t.shape()[0]});
      f.for_each([&](const Index& i, T& v) { v = t(i[0], o.n); });
      flat.push_back(std::move(f));
    }
    b = on_root(Shape::extents({m}), flat);
    xd = on_root(Shape::extents({n}), x);
  }
  const double eps = std::numeric_limits<T>::epsilon();
  double ratios[3] = {0, 0, 0};
  double errors[3] = {0, 0, 0};
  if (env.rank() == 0) {
    const double a_norm = std::max(norm(a), std::numeric_limits<double>::min());
    std::vector<double> qr(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, n, 1.0, qd.data(), n, rd.data(), n,
                0.0, qr.data(), n);
    for (std::size_t k = 0; k < qr.size(); ++k) qr[k] = a[k] - qr[k];
    errors[0] = norm(qr) / a_norm;
    std::vector<double> qtq(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, n, m, 1.0, qd.data(), n, qd.data(), n,
                0.0, qtq.data(), n);
    for (int i = 0; i < n; ++i) qtq[static_cast<std::size_t>(i) * (n + 1)] -= 1.0;
    errors[1] = norm(qtq);
    if (solve) {
      std::vector<double> res = b;  // A·x − b
      cblas_dgemv(CblasRowMajor, CblasNoTrans, m, n, 1.0, a.data(), n, xd.data(), 1, -1.0,
                  res.data(), 1);
      std::vector<double> g(static_cast<std::size_t>(n));
      cblas_dgemv(CblasRowMajor, CblasTrans, m, n, 1.0, a.data(), n, res.data(), 1, 0.0, g.data(),
                  1);
      const double scale = a_norm * (a_norm * norm(xd) + norm(b));
      errors[2] = norm(g) / std::max(a_norm * norm(res), std::numeric_limits<double>::min());
      ratios[2] = norm(g) / (std::max(scale, std::numeric_limits<double>::min()) * m * eps);
    }
    for (int k = 0; k < 2; ++k) ratios[k] = errors[k] / (m * eps);
    for (double& v : ratios) {
      if (std::isnan(v)) v = std::numeric_limits<double>::infinity();
    }
  }
  broadcast(ratios, 0, env.comm());
  broadcast(errors, 0, env.comm());
  app::CheckResult check;
  check.ran = true;
  check.passed = ratios[0] <= 30.0 && ratios[1] <= 30.0 && (!solve || ratios[2] <= 30.0);
  check.max_rel_error = std::max(errors[0], errors[1]);
  check.summary = fmt::format(
      "{} (|A - Q*R|_F / |A|_F = {:.3g}, {:.3g} m eps; |Q^T*Q - I|_F = "
      "{:.3g}, {:.3g} m eps",
      check.passed ? "passed" : "FAILED", errors[0], ratios[0], errors[1], ratios[1]);
  if (solve) {
    check.summary += fmt::format(
        "; |A^T*(A*x - b)| / (|A| |A*x - b|) = {:.3g}, {:.3g} m eps of "
        "|A| (|A| |x| + |b|)",
        errors[2], ratios[2]);
  }
  check.summary += ")";
  return check;
}

}  // namespace hit::qr
