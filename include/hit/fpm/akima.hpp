#pragma once
// Akima spline interpolation (docs/fpm.md, "The model"): a C¹ piecewise cubic through the data that
// follows local trends without the overshoot of a natural cubic spline. FuPerMod interpolates
// kernel *times* with it; hit::fpm::Model uses it for ModelKind::akima.

#include <span>
#include <vector>

namespace hit::fpm {

// One cubic piece on [x, x + h]: y = c0 + c1·u + c2·u² + c3·u³ with u = position − x.
struct Cubic {
  double x = 0;
  double h = 0;
  double c0 = 0, c1 = 0, c2 = 0, c3 = 0;

  double value(double u) const noexcept { return c0 + u * (c1 + u * (c2 + u * c3)); }
  double slope(double u) const noexcept { return c1 + u * (2 * c2 + u * 3 * c3); }
};

class AkimaSpline {
 public:
  // `x` strictly increasing, same length as `y`, at least 2 values (2 values: the straight line).
  // Throws Error(invalid_argument) naming what is wrong.
  AkimaSpline(std::span<const double> x, std::span<const double> y);

  // Inside [x_0, x_{m-1}] the spline; outside, the polynomial of the nearest end piece.
  double operator()(double at) const;
  double derivative(double at) const;

  // y'_i at every node, from the weighted secant slopes (the heart of Akima's method).
  const std::vector<double>& node_slopes() const noexcept { return slopes_; }
  // The m − 1 pieces, in order.
  const std::vector<Cubic>& pieces() const noexcept { return pieces_; }

 private:
  const Cubic& piece_at(double at) const;
  std::vector<double> slopes_;
  std::vector<Cubic> pieces_;
};

}  // namespace hit::fpm
