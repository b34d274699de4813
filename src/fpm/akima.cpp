#include "hit/fpm/akima.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "hit/core/error.hpp"

namespace hit::fpm {

AkimaSpline::AkimaSpline(std::span<const double> x, std::span<const double> y) {
  require(x.size() == y.size(), ErrorKind::invalid_argument,
          "Akima spline: " + std::to_string(x.size()) + " abscissae but " +
              std::to_string(y.size()) + " values");
  require(x.size() >= 2, ErrorKind::invalid_argument,
          "Akima spline: needs at least 2 points, got " + std::to_string(x.size()));
  const std::size_t m = x.size();
  for (std::size_t i = 0; i < m; ++i) {
    require(std::isfinite(x[i]) && std::isfinite(y[i]), ErrorKind::invalid_argument,
            [&] { return "Akima spline: point " + std::to_string(i) + " is not finite"; });
    if (i > 0) {
      require(x[i] > x[i - 1], ErrorKind::invalid_argument, [&] {
        return "Akima spline: abscissae must increase strictly, but x[" + std::to_string(i) +
               "] <= x[" + std::to_string(i - 1) + "]";
      });
    }
  }

  // Secant slopes δ_k, k = 0..m−2, stored with an offset of 2 so that the two extra slopes on
  // each side (δ_{-2}, δ_{-1}, δ_{m-1}, δ_m) extend the data as a quadratic would.
  std::vector<double> delta(m + 3);
  auto sec = [&](std::ptrdiff_t k) -> double& { return delta[static_cast<std::size_t>(k + 2)]; };
  for (std::size_t k = 0; k + 1 < m; ++k) {
    sec(static_cast<std::ptrdiff_t>(k)) = (y[k + 1] - y[k]) / (x[k + 1] - x[k]);
  }
  const auto last = static_cast<std::ptrdiff_t>(m) - 2;  // index of the last real slope
  if (m == 2) {
    // A straight line: every extended slope equals the only one.
    sec(-2) = sec(-1) = sec(1) = sec(2) = sec(0);
  } else {
    sec(-1) = 2 * sec(0) - sec(1);
    sec(-2) = 2 * sec(-1) - sec(0);
    sec(last + 1) = 2 * sec(last) - sec(last - 1);
    sec(last + 2) = 2 * sec(last + 1) - sec(last);
  }

  slopes_.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    const auto k = static_cast<std::ptrdiff_t>(i);
    // The left slope is weighted by how much the slope changes on the right, and vice versa, so
    // a node next to a straight stretch takes that stretch's slope.
    const double wa = std::abs(sec(k + 1) - sec(k));
    const double wb = std::abs(sec(k - 1) - sec(k - 2));
    slopes_[i] =
        (wa + wb > 0) ? (wa * sec(k - 1) + wb * sec(k)) / (wa + wb) : (sec(k - 1) + sec(k)) / 2;
  }

  pieces_.resize(m - 1);
  for (std::size_t k = 0; k + 1 < m; ++k) {
    const double h = x[k + 1] - x[k];
    const double d = sec(static_cast<std::ptrdiff_t>(k));
    Cubic& c = pieces_[k];
    c.x = x[k];
    c.h = h;
    c.c0 = y[k];
    c.c1 = slopes_[k];
    c.c2 = (3 * d - 2 * slopes_[k] - slopes_[k + 1]) / h;
    c.c3 = (slopes_[k] + slopes_[k + 1] - 2 * d) / (h * h);
  }
}

const Cubic& AkimaSpline::piece_at(double at) const {
  auto it = std::upper_bound(pieces_.begin(), pieces_.end(), at,
                             [](double v, const Cubic& c) { return v < c.x; });
  if (it == pieces_.begin()) return pieces_.front();
  return *(it - 1);
}

double AkimaSpline::operator()(double at) const {
  const Cubic& c = piece_at(at);
  return c.value(at - c.x);
}

double AkimaSpline::derivative(double at) const {
  const Cubic& c = piece_at(at);
  return c.slope(at - c.x);
}

}  // namespace hit::fpm
